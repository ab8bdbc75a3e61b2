package dev.reconcile.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.reconcile.cli.replay.Scenario;
import dev.reconcile.cli.replay.ScenarioException;
import dev.reconcile.cli.replay.ScenarioParser;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Bad scenario files are refused with a message naming the file and the field. */
class ScenarioParserTest {
  @TempDir Path dir;

  private Path write(String yaml) throws Exception {
    Path f = dir.resolve("bad.yaml");
    Files.writeString(f, yaml);
    return f;
  }

  static Stream<Arguments> badFiles() {
    return Stream.of(
        Arguments.of("replicas: [a]", "replicas: a scenario needs 2 to 16 replicas"),
        Arguments.of("name: x", "replicas: missing"),
        Arguments.of("replicas: [a, b]\ncolour: red", "colour: unknown field"),
        Arguments.of(
            "replicas: [a, b]\ntimeline:\n  - write: {on: a, count: ten}",
            "timeline[0].write.count: expected an integer, got 'ten'"),
        Arguments.of(
            "replicas: [a, b]\ntimeline:\n  - write: {on: c, count: 1}",
            "timeline[0].write.on: no replica named 'c'"),
        Arguments.of(
            "replicas: [a, b]\ntimeline:\n  - repair: {from: a, to: a}",
            "timeline[0].repair.to: a replica cannot repair with itself"),
        Arguments.of(
            "replicas: [a, b]\ntimeline:\n  - explode: a", "timeline[0].explode: unknown event"),
        Arguments.of(
            "replicas: [a, b]\ntimeline:\n  - delete: {on: a, count: 5}",
            "timeline[0].delete.count: a delete needs keys or a range"),
        Arguments.of(
            "replicas: [a, b]\ntimeline:\n  - write: {on: a, range: [10, 5]}",
            "timeline[0].write.range: need 0 <= from < to"),
        Arguments.of(
            "replicas: [a, b]\ntimeline:\n  - partition: [a]",
            "timeline[0].partition: a link is two distinct replicas"),
        Arguments.of(
            "replicas: [a, b]\ntimeline:\n  - sleep: soon",
            "timeline[0].sleep: 'soon' is not a duration"),
        Arguments.of(
            "replicas: [a, b]\nconfig: {iblt-max-log2: 99}",
            "config: iblt-max-log2 99 outside [4, 20]"),
        Arguments.of(
            "replicas: [a, b]\nconfig: {no-such-key: 1}",
            "config.no-such-key: not an agent config key"),
        Arguments.of("replicas: [a, b]\nconfig: {peers: x}", "config.peers: is set by the runner"),
        Arguments.of(
            "replicas:\n  a: {}\n  b: {config: {clock-offset: yesterday}}",
            "replicas.b.config: clock-offset"),
        Arguments.of(
            "replicas:\n  a: {}\n  b: {config: {estimator-scale: 0}}",
            "replicas.b.config: estimator-scale 0.0 outside (0, 1000]"),
        Arguments.of(
            "replicas: [a, b]\ninitial: {generate: {n: -1}}", "initial.generate.n: -1 is outside"),
        Arguments.of(
            "replicas: [a, b]\ninitial: {generate: {n: 10, value-size: {min: 9, max: 3}}}",
            "initial.generate.value-size: max 3 < min 9"),
        Arguments.of(
            "replicas: [a, b]\ninitial: {from-dirs: {a: /nonexistent/dir}}",
            "initial.from-dirs.a: no such directory"),
        Arguments.of(
            "replicas: [a, b]\nexpect: {groups: [[a]]}",
            "expect.groups: every replica must be in a group; missing: b"),
        Arguments.of(
            "replicas: [a, b]\nexpect: {converge: {rounds: 1, within: 5s}}",
            "expect.converge: give either rounds"),
        Arguments.of(
            "replicas: [a, b]\nbackground: {interval: 0}", "background.interval: must be positive"),
        Arguments.of("replicas: [a, b]\ntimeline: [ {write: {on: a, count: 1}}", "not valid YAML"));
  }

  @ParameterizedTest(name = "{1}")
  @MethodSource("badFiles")
  void refusesWithFileAndField(String yaml, String expected) throws Exception {
    Path f = write(yaml.replace("\\n", "\n"));
    assertThatThrownBy(() -> ScenarioParser.parse(f))
        .isInstanceOf(ScenarioException.class)
        .hasMessageStartingWith("scenario " + f + ": ")
        .hasMessageContaining(expected);
  }

  @Test
  void missingFileIsNamed() {
    Path f = dir.resolve("nope.yaml");
    assertThatThrownBy(() -> ScenarioParser.parse(f))
        .hasMessage("scenario " + f + ": no such file");
  }

  @Test
  void everyCorpusScenarioParses() throws Exception {
    for (Path p : Corpus.all()) {
      Scenario s = ScenarioParser.parse(p);
      assertThat(s.replicas()).as(p.toString()).hasSizeGreaterThanOrEqualTo(2);
      assertThat(s.description()).as(p.toString()).isNotBlank();
    }
  }
}
