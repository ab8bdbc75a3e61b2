package dev.reconcile.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code .ci/SkippedTests.java}, the step of {@code .ci/run} after {@code mvn verify}: prints every
 * skipped test by name, fails when a suite CI set up for was skipped or did not run. Run on
 * hand-written Surefire and Failsafe reports.
 */
class SkippedTestsReportTest {
  private static final Path SCRIPT =
      Path.of("..", ".ci", "SkippedTests.java").toAbsolutePath().normalize();

  @TempDir Path root;

  private record Run(int status, String out) {}

  private Run run(String... required) throws Exception {
    List<String> cmd = new ArrayList<>();
    cmd.add(AgentJvm.JAVA.toString());
    cmd.add(SCRIPT.toString());
    cmd.add(root.toString());
    cmd.addAll(List.of(required));
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
    return new Run(p.exitValue(), out);
  }

  private void report(String module, String kind, String cls, String body) throws Exception {
    Path dir = root.resolve(module).resolve("target").resolve(kind);
    Files.createDirectories(dir);
    Files.writeString(
        dir.resolve("TEST-" + cls + ".xml"),
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuite name=\""
            + cls
            + "\">"
            + body
            + "</testsuite>\n");
  }

  private static String ran(String cls, String name) {
    return "<testcase name=\"" + name + "\" classname=\"" + cls + "\" time=\"0.1\"/>";
  }

  private static String skipped(String cls, String name, String why) {
    return "<testcase name=\""
        + name
        + "\" classname=\""
        + cls
        + "\"><skipped message=\""
        + why
        + "\"/></testcase>";
  }

  @Test
  void printsEverySkippedTestAndFailsWhenARequiredSuiteWasSkipped() throws Exception {
    String openssl = "dev.reconcile.agent.security.OpensslCertificatesTest";
    String rocks = "dev.reconcile.cli.RocksDbSideTest";
    report(
        "replica-agent",
        "surefire-reports",
        openssl,
        skipped(openssl, "certificatesMadeByOpenssl", "openssl not installed"));
    report(
        "cli",
        "surefire-reports",
        rocks,
        ran(rocks, "databaseWrittenByRocksDb")
            + skipped(rocks, "databaseWrittenByLdb", "ldb is not on PATH"));
    report("cli", "failsafe-reports", "dev.reconcile.cli.ShadedJarIT", ran("x.ShadedJarIT", "a"));
    String it = "dev.reconcile.it.ReplaySoakTest";
    report(
        "integration-tests",
        "surefire-reports",
        it,
        "<testcase name=\"soak\" classname=\""
            + it
            + "\"><skipped type=\"org.opentest4j.TestAbortedException\"><![CDATA["
            + "org.opentest4j.TestAbortedException: Assumption failed: soak runs only with -Psoak\n"
            + "\tat org.junit.jupiter.api.Assumptions.throwAssumptionFailed(Assumptions.java:321)"
            + "]]></skipped></testcase>");

    Run none = run();
    assertThat(none.status()).as(none.out()).isZero();
    assertThat(none.out())
        .contains("skipped tests: 3 of 5 (4 reports)")
        .contains(
            "SKIPPED dev.reconcile.agent.security.OpensslCertificatesTest.certificatesMadeByOpenssl"
                + " [replica-agent]: openssl not installed")
        .contains("SKIPPED dev.reconcile.cli.RocksDbSideTest.databaseWrittenByLdb [cli]")
        .contains(
            "SKIPPED dev.reconcile.it.ReplaySoakTest.soak [integration-tests]: Assumption failed:"
                + " soak runs only with -Psoak");

    Run needsOpenssl = run("openssl=OpensslCertificatesTest");
    assertThat(needsOpenssl.status()).isEqualTo(1);
    assertThat(needsOpenssl.out())
        .contains("FAIL: the openssl suite (OpensslCertificatesTest) was set up for but 1 of its");

    Run needsDocker = run("docker=ContainerClusterTest");
    assertThat(needsDocker.status()).isEqualTo(1);
    assertThat(needsDocker.out()).contains("(ContainerClusterTest) was set up for but did not run");

    Run jar = run("jar=ShadedJarIT");
    assertThat(jar.status()).as(jar.out()).isZero();
    assertThat(jar.out()).contains("ok: the jar suite (ShadedJarIT) ran 1 tests");
  }

  @Test
  void noReportsIsTrouble() throws Exception {
    Run r = run();
    assertThat(r.status()).isEqualTo(2);
    assertThat(r.out()).contains("no test reports");
  }
}
