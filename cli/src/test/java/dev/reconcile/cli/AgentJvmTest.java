package dev.reconcile.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class AgentJvmTest {
  @TempDir Path dir;

  @Test
  void hugePagesOnlyWhenTheKernelOffersThemOnRequest() throws Exception {
    Path f = dir.resolve("enabled");
    Files.writeString(f, "always [madvise] never\n");
    assertThat(AgentJvm.offersMadvise(f)).isTrue();
    Files.writeString(f, "[always] madvise never\n");
    assertThat(AgentJvm.offersMadvise(f)).isFalse();
    Files.writeString(f, "always madvise [never]\n");
    assertThat(AgentJvm.offersMadvise(f)).isFalse();
    assertThat(AgentJvm.offersMadvise(dir.resolve("missing"))).isFalse();
  }

  @Test
  void theLauncherGivesAnAgentTheSameOptionUnderTheSameCondition() throws Exception {
    Path root = Path.of("").toAbsolutePath();
    while (!Files.exists(root.resolve("bin/reconcile"))) {
      root = root.getParent();
    }
    String script = Files.readString(root.resolve("bin/reconcile"));
    String agentCase = script.substring(script.indexOf("  agent)"), script.indexOf("    ;;"));
    assertThat(agentCase)
        .contains("opts+=(" + AgentJvm.HUGE_PAGES + ")")
        .contains("'\\[madvise\\]' " + AgentJvm.THP)
        .contains("opts+=(" + AgentJvm.YOUNG_GENERATION + ")");
  }

  @Test
  void theYoungGenerationIsFixedWhateverTheKernelOffers() {
    assertThat(AgentJvm.defaultOptions()).contains(AgentJvm.YOUNG_GENERATION);
  }
}
