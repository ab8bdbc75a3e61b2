#!/usr/bin/env python3
"""Rewrites the code blocks of a doc that follow `<!-- source: PATH -->` with PATH's text.

Usage (from the repository root): docs/tools/embed_sources.py docs/embedding.md
EmbeddingDocTest fails when a block and its file differ; this script brings them back in line.
"""
import re
import sys

doc = sys.argv[1]
text = open(doc, encoding="utf-8").read()
pattern = re.compile(r"(<!-- source: (\S+) -->\n```java\n)(.*?)(```\n)", re.S)


def replace(m):
    body = open(m.group(2), encoding="utf-8").read()
    return m.group(1) + body + m.group(4)


new, n = pattern.subn(replace, text)
open(doc, "w", encoding="utf-8").write(new)
print(f"{doc}: {n} blocks")
