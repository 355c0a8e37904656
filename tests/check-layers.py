#!/usr/bin/env python3
"""check-layers.py: the engine's layer rule (doc/design.md), checked on sources and objects.

The engine is a stack of folders; each may use only the folders below it. meson compiles each
folder with only itself and the folders below on the include path, so an upward
`#include "x.h"` does not compile. This test catches what the include path cannot:

  - includes written as paths ("../scope/scope-impl.h") that reach a higher folder;
  - calls to a higher folder through a hand-written declaration: a symbol a layer's objects
    need (nm -u) that only a higher layer's objects define.

Usage: check-layers.py ENGINE_SRC_DIR ENGINE_BUILD_DIR LAYER,LAYER,... (bottom first)
       check-layers.py --self-test
Prints one line per violation and exits 1 if there is any.
"""
import os
import re
import subprocess
import sys
import tempfile

INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)


def include_violations(src, layers):
    """(file, included header, its folder) for every include that reaches a higher folder."""
    rank = {name: i for i, name in enumerate(layers)}
    headers = {}  # basename -> folder, for headers found through the include path
    for name in layers:
        folder = os.path.join(src, name)
        for f in os.listdir(folder) if os.path.isdir(folder) else []:
            if f.endswith('.h'):
                headers.setdefault(f, name)
    found = []
    for name in layers:
        folder = os.path.join(src, name)
        for f in sorted(os.listdir(folder)) if os.path.isdir(folder) else []:
            if not f.endswith(('.c', '.h')):
                continue
            with open(os.path.join(folder, f), encoding='utf-8') as fh:
                text = fh.read()
            for inc in INCLUDE.findall(text):
                if inc.startswith('gradscope/'):
                    continue  # the public API: every layer may include it
                target = os.path.normpath(os.path.join(folder, inc))
                if os.path.exists(target):
                    owner = os.path.relpath(target, src).split(os.sep)[0]
                else:
                    owner = headers.get(os.path.basename(inc))
                if owner in rank and rank[owner] > rank[name]:
                    found.append((f'{name}/{f}', inc, owner))
    return found


def nm(archive, undefined):
    args = ['nm', '--undefined-only' if undefined else '--defined-only', archive]
    out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
    symbols = set()
    for line in out.splitlines():
        parts = line.split()
        if undefined and len(parts) == 2 and parts[0] == 'U':
            symbols.add(parts[1])
        elif not undefined and len(parts) == 3 and parts[1] in 'TDBRVW':
            symbols.add(parts[2])
    return symbols


def call_violations(defined, needed, layers):
    """(layer, symbol, higher layer) for every symbol a layer needs that only a higher one
    defines. defined and needed map a layer to a set of symbols."""
    rank = {name: i for i, name in enumerate(layers)}
    owner = {}
    for name in layers:
        for sym in defined.get(name, ()):
            owner.setdefault(sym, name)
    found = []
    for name in layers:
        for sym in sorted(needed.get(name, ())):
            o = owner.get(sym)
            if o is not None and rank[o] > rank[name]:
                found.append((name, sym, o))
    return found


def check(src, build, layers):
    problems = [f'{f} includes "{inc}" from {owner}/, a higher layer'
                for f, inc, owner in include_violations(src, layers)]
    defined, needed = {}, {}
    for name in layers:
        archive = os.path.join(build, f'libgradscope-{name}.a')
        defined[name] = nm(archive, False)
        needed[name] = nm(archive, True)
    problems += [f'{name}/ calls {sym}, which only {owner}/ (a higher layer) defines'
                 for name, sym, owner in call_violations(defined, needed, layers)]
    return problems


def self_test():
    """The checker must be able to fail: an upward include (by name and by path) and an
    upward call are each reported, and a downward one is not."""
    layers = ['base', 'core', 'scope']
    with tempfile.TemporaryDirectory() as src:
        for name, files in {
            'base': {'base.h': '', 'a.c': '#include "base.h"\n'},
            'core': {'core-impl.h': '#include "base.h"\n',
                     'x.c': '#include "core-impl.h"\n#include "scope-impl.h"\n'},
            'scope': {'scope-impl.h': '#include "core-impl.h"\n',
                      'y.c': '#include "core-impl.h"\n'},
        }.items():
            os.mkdir(os.path.join(src, name))
            for f, text in files.items():
                with open(os.path.join(src, name, f), 'w', encoding='utf-8') as fh:
                    fh.write(text)
        with open(os.path.join(src, 'base', 'b.c'), 'w', encoding='utf-8') as fh:
            fh.write('#include "scope-impl.h"\n')
        got = sorted(include_violations(src, layers))
        want = [('base/b.c', '../scope/scope-impl.h', 'scope'),
                ('core/x.c', 'scope-impl.h', 'scope')]
        assert got == want, got
    defined = {'base': {'gs__intern'}, 'core': {'gs__lookup'}, 'scope': {'gs__own_new'}}
    needed = {'core': {'gs__own_new', 'gs__intern', 'malloc'}, 'scope': {'gs__lookup'}}
    got = call_violations(defined, needed, layers)
    assert got == [('core', 'gs__own_new', 'scope')], got
    print('self-test: upward includes and calls are reported, downward ones are not')


def main(argv):
    if argv[1:] == ['--self-test']:
        self_test()
        return 0
    src, build, layers = argv[1], argv[2], argv[3].split(',')
    problems = check(src, build, layers)
    for p in problems:
        print(p)
    print(f'{len(layers)} layers, {len(problems)} upward uses')
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
