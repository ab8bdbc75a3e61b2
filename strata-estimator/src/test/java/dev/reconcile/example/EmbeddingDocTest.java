package dev.reconcile.example;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** docs/embedding.md shows the example's files verbatim. */
class EmbeddingDocTest {
  private static final Pattern BLOCK =
      Pattern.compile("<!-- source: (\\S+) -->\n```java\n(.*?)```\n", Pattern.DOTALL);

  @Test
  void theDocShowsTheExampleAsItIsCompiled() throws IOException {
    Path root = Path.of("").toAbsolutePath().getParent();
    String doc = Files.readString(root.resolve("docs/embedding.md"), StandardCharsets.UTF_8);
    Matcher m = BLOCK.matcher(doc);
    int blocks = 0;
    while (m.find()) {
      blocks++;
      String file = m.group(1);
      assertThat(m.group(2))
          .as("%s in docs/embedding.md (run docs/tools/embed_sources.py docs/embedding.md)", file)
          .isEqualTo(Files.readString(root.resolve(file), StandardCharsets.UTF_8));
    }
    assertThat(blocks).isEqualTo(2);
  }
}
