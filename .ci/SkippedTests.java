import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import javax.xml.parsers.DocumentBuilderFactory;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

/**
 * Reads every Surefire and Failsafe report under ROOT ({@code * /target/surefire-reports/TEST-*.xml},
 * {@code failsafe-reports}), prints each skipped test by name with its reason, and fails (exit 1)
 * when a required suite was skipped or did not run at all:
 *
 * <pre>
 *   java .ci/SkippedTests.java ROOT [SUITE=TestClass ...]      e.g. docker=ContainerClusterTest
 * </pre>
 *
 * .ci/run requires the suites whose tools it installed (Docker, ldb, openssl). Exit 2: no report.
 */
public class SkippedTests {
  record Case(String module, String cls, String name, String skipped) {}

  /** The message attribute, else the first line of the body (an assumption's stack trace). */
  static String reason(Element skipped) {
    String m = skipped.getAttribute("message").trim();
    if (m.isEmpty()) {
      m = skipped.getTextContent().strip().split("\n", 2)[0];
      m = m.replaceFirst("^org\\.opentest4j\\.TestAbortedException: ", "").trim();
    }
    return m.isEmpty() ? "(no reason given)" : m;
  }

  public static void main(String[] args) throws Exception {
    Path root = Path.of(args.length > 0 ? args[0] : ".");
    Map<String, String> required = new LinkedHashMap<>();
    for (int i = 1; i < args.length; i++) {
      int eq = args[i].indexOf('=');
      required.put(args[i].substring(eq + 1), args[i].substring(0, eq));
    }
    List<Case> cases = new ArrayList<>();
    List<Path> reports = new ArrayList<>();
    try (Stream<Path> modules = Files.list(root)) {
      for (Path m : modules.filter(Files::isDirectory).sorted().toList()) {
        for (String kind : List.of("surefire-reports", "failsafe-reports")) {
          Path dir = m.resolve("target").resolve(kind);
          if (!Files.isDirectory(dir)) {
            continue;
          }
          try (Stream<Path> s = Files.list(dir)) {
            s.filter(p -> p.getFileName().toString().matches("TEST-.*\\.xml"))
                .sorted()
                .forEach(reports::add);
          }
        }
      }
    }
    if (reports.isEmpty()) {
      System.out.println("skipped tests: no test reports under " + root.toAbsolutePath());
      System.exit(2);
    }
    DocumentBuilderFactory f = DocumentBuilderFactory.newInstance();
    f.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
    for (Path p : reports) {
      String module = root.relativize(p).getName(0).toString();
      NodeList tcs = f.newDocumentBuilder().parse(p.toFile()).getElementsByTagName("testcase");
      for (int i = 0; i < tcs.getLength(); i++) {
        Element tc = (Element) tcs.item(i);
        NodeList sk = tc.getElementsByTagName("skipped");
        String reason = null;
        if (sk.getLength() > 0) {
          reason = reason((Element) sk.item(0));
        }
        cases.add(new Case(module, tc.getAttribute("classname"), tc.getAttribute("name"), reason));
      }
    }
    Map<String, List<Case>> skipped = new TreeMap<>();
    for (Case c : cases) {
      if (c.skipped() != null) {
        skipped.computeIfAbsent(c.module() + " " + c.cls(), k -> new ArrayList<>()).add(c);
      }
    }
    long n = skipped.values().stream().mapToLong(List::size).sum();
    System.out.printf("skipped tests: %d of %d (%d reports)%n", n, cases.size(), reports.size());
    skipped.forEach(
        (cls, list) -> {
          for (Case c : list) {
            System.out.printf("  SKIPPED %s.%s [%s]: %s%n", c.cls(), c.name(), c.module(), c.skipped());
          }
        });
    boolean failed = false;
    for (Map.Entry<String, String> r : required.entrySet()) {
      String cls = r.getKey();
      List<Case> of =
          cases.stream()
              .filter(c -> c.cls().equals(cls) || c.cls().endsWith("." + cls))
              .toList();
      long skips = of.stream().filter(c -> c.skipped() != null).count();
      if (of.isEmpty() || skips > 0) {
        failed = true;
        System.out.printf(
            "FAIL: the %s suite (%s) was set up for but %s%n",
            r.getValue(), cls, of.isEmpty() ? "did not run" : skips + " of its tests were skipped");
      } else {
        System.out.printf("ok: the %s suite (%s) ran %d tests%n", r.getValue(), cls, of.size());
      }
    }
    System.exit(failed ? 1 : 0);
  }
}
