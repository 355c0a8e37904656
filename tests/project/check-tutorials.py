#!/usr/bin/env python3
"""check-tutorials.py SRCDIR GRADSCOPE TOUR_DIR: the tutorials in doc/tutorials/ say what the
code does. Every tour `gradscope explain --list-tours` lists has a tutorial in English and in
Simplified Chinese; each tutorial names its example (<!-- example: PATH -->) and every ```c
or ```python block in it appears verbatim, as whole consecutive lines, in that example's
source (a Python block in a Python example, a C block in a C one); every `gradscope explain`
command in a ```sh block runs and succeeds, and every `gradscope-inspector --tour NAME` names
a tour that exists. A tour the build left out (GS_TOUR_SKIP, "NAME: why": tour 8 without the
Python module or PyTorch) keeps its tutorial checked, but its commands are not run."""
import os
import re
import shlex
import subprocess
import sys

src, gradscope, tour_dir = sys.argv[1:4]
tutorials = os.path.join(src, "doc", "tutorials")
env = dict(os.environ, GS_TOUR_DIR=tour_dir)
failures = []
skip = os.environ.get("GS_TOUR_SKIP", "")
left_out = skip.split(":", 1)[0] if skip else None
if left_out:
    print(f"# not running the commands of tour {skip}")


def fail(message):
    failures.append(message)
    print("not ok: " + message)


def appears_verbatim(block, source):
    """block's lines are consecutive whole lines of source."""
    lines, src_lines = block.split("\n"), source.split("\n")
    return any(src_lines[i:i + len(lines)] == lines for i in range(len(src_lines)))


# The check itself must be able to fail: a block changed by one character is not found.
assert appears_verbatim("b\nc", "a\nb\nc\nd")
assert not appears_verbatim("b\nc ", "a\nb\nc\nd")
assert not appears_verbatim("b\nd", "a\nb\nc\nd")

listed = subprocess.run([gradscope, "explain", "--list-tours"], env=env, check=True,
                        capture_output=True, text=True).stdout.split("\n")
tours = [line.split("\t")[0] for line in listed if line]
files = sorted(f for f in os.listdir(tutorials) if f.endswith(".md") and f != "README.md")
for tour in tours:
    for suffix in (".md", ".zh_CN.md"):
        if not any(re.fullmatch(r"\d+-" + re.escape(tour) + re.escape(suffix), f) for f in files):
            fail(f"tour {tour} has no tutorial *-{tour}{suffix}")

# Which fenced block languages go with which example, by the example's extension.
BLOCK_LANGUAGES = {".c": "c", ".py": "python"}

blocks_checked = commands_run = 0
for name in files:
    text = open(os.path.join(tutorials, name), encoding="utf-8").read()
    example = re.search(r"<!-- example: (\S+) -->", text)
    if not example:
        fail(f"{name} does not name its example (<!-- example: PATH -->)")
        continue
    source = open(os.path.join(src, example.group(1)), encoding="utf-8").read()
    source_lang = BLOCK_LANGUAGES.get(os.path.splitext(example.group(1))[1])
    for lang, body in re.findall(r"```(\w*)\n(.*?)\n```", text, re.S):
        if lang in BLOCK_LANGUAGES.values():
            blocks_checked += 1
            if lang != source_lang:
                fail(f"{name}: a {lang} block, but its example {example.group(1)} is not {lang}")
            elif not appears_verbatim(body, source):
                fail(f"{name}: a {lang} block is not in {example.group(1)}:\n{body}")
        elif lang == "sh":
            for line in body.split("\n"):
                words = shlex.split(line)
                extra = {}
                while words and "=" in words[0]:
                    key, value = words.pop(0).split("=", 1)
                    extra[key] = value
                if words[:1] == ["gradscope-inspector"]:
                    if words[1:2] != ["--tour"] or words[2] not in tours:
                        fail(f"{name}: '{line}' names no tour")
                elif words[:2] == ["gradscope", "explain"] and left_out in words:
                    pass  # its program is not built here: the tour is skipped, said above
                elif words[:2] == ["gradscope", "explain"]:
                    run = subprocess.run([gradscope] + words[1:], env=dict(env, **extra),
                                         capture_output=True, text=True)
                    commands_run += 1
                    if run.returncode != 0:
                        fail(f"{name}: '{line}' failed: {run.stderr}")
                else:
                    fail(f"{name}: unexpected command '{line}'")
        else:
            fail(f"{name}: a code block without a language the test knows ({lang!r})")

print(f"{len(files)} tutorials, {blocks_checked} code blocks, {commands_run} commands checked")
if blocks_checked == 0 or commands_run == 0:
    fail("nothing was checked")
sys.exit(1 if failures else 0)
