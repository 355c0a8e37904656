#!/usr/bin/env python3
"""check-layers.py: the layer rules of doc/design.md, checked on sources and objects.

The engine is a stack of folders with the capture library (capture/) below them all; each may
use only the folders below it. The inspector stands on the capture library too. meson compiles
each engine folder with only itself and the folders below on the include path, so an upward
`#include "x.h"` does not compile. This test catches what the include path cannot:

  - includes written as paths ("../scope/scope-impl.h") that reach a higher layer;
  - calls to a higher layer through a hand-written declaration: a symbol a layer's objects
    need (nm -u) that only a higher layer's objects define.

The inspector's folders (inspector/layers.txt) form a graph, not a line: each folder names
the folders it may use, and may use what those may use. The inspector's sources include
headers by name, found through meson's include directories, so nothing stops an upward
include but this test: every include is resolved to the folder that holds the header, and
every symbol an object needs to the folder whose object defines it. Every source must sit in
a listed folder, and the graph must have no cycle.

The Python module (python/) uses the engine only as any program does: its includes are its
own headers and the public ones (include/gradscope/), and every gs_ symbol its objects need is
named in a public header (it links a copy of the engine's objects, so an internal gs__
function would link fine; this is what refuses it).

Usage: check-layers.py LAYER LAYER ... (bottom first), each LAYER written
       NAME=SOURCE_DIR[,SOURCE_DIR...]:ARCHIVE[,ARCHIVE...]
       (a layer's folders, and the static libraries its objects are in);
       check-layers.py --inspector INSPECTOR_SRC_DIR LAYERS_FILE [INSPECTOR_BUILD_DIR]
       check-layers.py --python PYTHON_SRC_DIR PUBLIC_INCLUDE_DIR [MODULE_OBJECT_DIR]
       check-layers.py --self-test
Prints one line per violation and exits 1 if there is any.
"""
import glob
import os
import re
import subprocess
import sys
import tempfile

INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)
ANY_INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^">]+)[">]', re.M)


def include_violations(layers):
    """(file, included header, its layer) for every include that reaches a higher layer.
    layers: (name, [source folder...]) bottom first; a folder's subfolders are part of it."""
    layers = [(name, [root for folder in folders for root, _, _ in sorted(os.walk(folder))])
              for name, folders in layers]
    rank = {name: i for i, (name, _) in enumerate(layers)}
    headers = {}  # basename -> layer, for headers found through the include path
    folder_owner = {}  # source folder -> layer
    for name, folders in layers:
        for folder in folders:
            folder_owner[os.path.normpath(folder)] = name
            for f in os.listdir(folder) if os.path.isdir(folder) else []:
                if f.endswith('.h'):
                    headers.setdefault(f, name)
    found = []
    for name, folders in layers:
        for folder in folders:
            label = os.path.basename(os.path.normpath(folder))
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
                        owner = folder_owner.get(os.path.dirname(target))
                    else:
                        owner = headers.get(os.path.basename(inc))
                    if owner in rank and rank[owner] > rank[name]:
                        found.append((f'{label}/{f}', inc, owner))
    return found


def nm(archive, undefined):
    """The symbols an archive or object (or a list of them) needs or defines."""
    files = [archive] if isinstance(archive, str) else list(archive)
    args = ['nm', '--undefined-only' if undefined else '--defined-only'] + files
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


def check(layers):
    """layers: (name, [source folder...], [archive...]) bottom first."""
    problems = [f'{f} includes "{inc}" from {owner}/, a higher layer'
                for f, inc, owner in include_violations([(n, d) for n, d, _ in layers])]
    defined, needed = {}, {}
    for name, _, archives in layers:
        defined[name], needed[name] = set(), set()
        for archive in archives:
            defined[name] |= nm(archive, False)
            needed[name] |= nm(archive, True)
    order = [name for name, _, _ in layers]
    problems += [f'{name}/ calls {sym}, which only {owner}/ (a higher layer) defines'
                 for name, sym, owner in call_violations(defined, needed, order)]
    return problems


def parse_layer(arg):
    """NAME=DIR[,DIR...]:ARCHIVE[,ARCHIVE...] -> (name, [dir...], [archive...])."""
    name, rest = arg.split('=', 1)
    folders, archives = rest.split(':', 1)
    return name, folders.split(','), archives.split(',')


def read_graph(path):
    """The folder graph of a layers file: {folder: [folders it may use directly]}, in order.
    A line is 'folder: used used ...'; '#' starts a comment."""
    graph = {}
    with open(path, encoding='utf-8') as fh:
        for line in fh:
            line = line.split('#', 1)[0].strip()
            if not line:
                continue
            name, _, uses = line.partition(':')
            graph[name.strip()] = uses.split()
    return graph


def graph_problems(graph):
    """Folders used but not listed, and cycles (each reported once, by its folders)."""
    problems = [f'layers: {name} uses {used}, which is not listed'
                for name, uses in graph.items() for used in uses if used not in graph]
    state, cycles = {}, []

    def visit(name, path):
        state[name] = 'open'
        for used in graph.get(name, ()):
            if state.get(used) == 'open':
                cycles.append(path[path.index(used):] + [used])
            elif used in graph and used not in state:
                visit(used, path + [used])
        state[name] = 'done'

    for name in graph:
        if name not in state:
            visit(name, [name])
    problems += ['layers: a cycle: ' + ' -> '.join(c) for c in cycles]
    return problems


def allowed_uses(graph):
    """{folder: every folder it may use}: itself, what it lists, what those may use."""
    allowed = {}
    for name in graph:
        seen, todo = {name}, list(graph[name])
        while todo:
            used = todo.pop()
            if used not in seen:
                seen.add(used)
                todo.extend(graph.get(used, ()))
        allowed[name] = seen
    return allowed


def folder_of(rel, graph):
    """The deepest listed folder holding the file rel (a path from the source root)."""
    parts = rel.split('/')[:-1]
    while parts:
        if '/'.join(parts) in graph:
            return '/'.join(parts)
        parts.pop()
    return None


def sources_under(root):
    for dirpath, _, names in os.walk(root):
        for f in sorted(names):
            if f.endswith(('.c', '.h')):
                yield os.path.relpath(os.path.join(dirpath, f), root).replace(os.sep, '/')


def folder_include_violations(src, graph):
    """Sources outside every listed folder, headers whose name is not unique (an include by
    name could mean either), and (file, include, its folder) for every include of a folder
    the file's folder may not use."""
    allowed = allowed_uses(graph)
    files = sorted(sources_under(src))
    by_name, problems, found = {}, [], []
    for rel in files:
        if rel.endswith('.h'):
            by_name.setdefault(os.path.basename(rel), []).append(rel)
    for name, where in sorted(by_name.items()):
        if len(where) > 1:
            problems.append(f'{name} is in more than one folder: {", ".join(where)}')
    for rel in files:
        folder = folder_of(rel, graph)
        if folder is None:
            problems.append(f'{rel} is in no folder of the layers file')
            continue
        with open(os.path.join(src, rel), encoding='utf-8') as fh:
            text = fh.read()
        for inc in INCLUDE.findall(text):
            target = os.path.normpath(os.path.join(os.path.dirname(rel), inc)).replace(os.sep, '/')
            if not os.path.exists(os.path.join(src, target)):
                where = by_name.get(os.path.basename(inc))
                if not where:
                    continue  # not an inspector header: the engine's, GLib's, generated
                target = where[0]
            owner = folder_of(target, graph)
            if owner is not None and owner not in allowed[folder]:
                found.append((rel, inc, owner))
    return problems, found


def object_source(obj, build):
    """The source path (from the build root's matching source folder) an object of meson's
    was compiled from: build/D/T.p/a_b_c.c.o is D/a/b/c.c (the inspector's file names have no
    '_'); None for generated sources."""
    rel = os.path.relpath(obj, build).replace(os.sep, '/')
    target_dir, name = rel.rsplit('/', 1)
    subdir = target_dir.rsplit('/', 1)[0] if '/' in target_dir else ''
    if name.startswith('meson-generated') or not name.endswith('.c.o'):
        return None
    src = name[:-2].replace('_', '/')
    return f'{subdir}/{src}' if subdir else src


def folder_call_violations(defined, needed, graph):
    """(folder, symbol, defining folder) for every symbol a folder needs that only a folder
    it may not use defines. defined and needed map a folder to a set of symbols."""
    allowed = allowed_uses(graph)
    owners = {}
    for name, symbols in defined.items():
        for sym in symbols:
            owners.setdefault(sym, set()).add(name)
    found = []
    for name in sorted(needed):
        for sym in sorted(needed[name]):
            where = owners.get(sym)
            if where and not where & allowed[name]:
                found.append((name, sym, sorted(where)[0]))
    return found


def check_inspector(src, layers_file, build=None):
    graph = read_graph(layers_file)
    problems = graph_problems(graph)
    more, found = folder_include_violations(src, graph)
    problems += more
    problems += [f'{rel} includes "{inc}" from {owner}/, which {folder_of(rel, graph)}/ may '
                 f'not use' for rel, inc, owner in found]
    if build is not None:
        by_folder, objects = {}, 0
        for obj in sorted(glob.glob(os.path.join(build, '**', '*.p', '*.c.o'), recursive=True)):
            rel = object_source(obj, build)
            if rel is None:
                continue
            if not os.path.exists(os.path.join(src, rel)):
                problems.append(f'{os.path.relpath(obj, build)}: no source {rel}')
                continue
            folder = folder_of(rel, graph)
            if folder is None:
                continue  # reported above
            objects += 1
            by_folder.setdefault(folder, []).append(obj)
        defined = {name: nm(objs, False) for name, objs in by_folder.items()}
        needed = {name: nm(objs, True) for name, objs in by_folder.items()}
        if objects == 0:
            problems.append(f'{build}: no objects of the inspector to check')
        problems += [f'{name}/ calls {sym}, which only {owner}/ defines, and {name}/ may not '
                     f'use it' for name, sym, owner in folder_call_violations(defined, needed,
                                                                            graph)]
    return graph, problems


PUBLIC_NAME = re.compile(r'\bgs_\w+')


def python_include_violations(src, public):
    """(file, include) for every include of the Python module that is neither its own header
    nor a public one of the engine."""
    found = []
    for rel in sorted(sources_under(src)):
        with open(os.path.join(src, rel), encoding='utf-8') as fh:
            text = fh.read()
        for kind, inc in ANY_INCLUDE.findall(text):
            if inc.startswith('gradscope/'):
                if not os.path.exists(os.path.join(public, inc[len('gradscope/'):])):
                    found.append((rel, inc))
            elif kind == '"' and not os.path.exists(
                    os.path.normpath(os.path.join(src, os.path.dirname(rel), inc))):
                found.append((rel, inc))
            elif kind == '"' and not os.path.normpath(
                    os.path.join(src, os.path.dirname(rel), inc)).startswith(
                        os.path.normpath(src) + os.sep):
                found.append((rel, inc))
    return found


def python_call_violations(needed, public_names):
    """Every gs_ symbol the module's own objects need that no public header names."""
    return sorted(sym for sym in needed
                  if sym.startswith('gs_') and sym not in public_names)


def check_python(src, public, objects_dir=None):
    problems = [f'python/{rel} includes "{inc}", which is not the module\'s own header nor '
                f'the engine\'s public API' for rel, inc in python_include_violations(src, public)]
    if objects_dir is not None:
        names = set()
        for h in glob.glob(os.path.join(public, '*.h')):
            with open(h, encoding='utf-8') as fh:
                names.update(PUBLIC_NAME.findall(fh.read()))
        # Sources outside the object's own folder compile to names that start with a dot
        # (.._errors.c.o), which a glob would skip.
        objects = sorted(os.path.join(objects_dir, f) for f in os.listdir(objects_dir)
                         if f.endswith('.c.o')) if os.path.isdir(objects_dir) else []
        if not objects:
            problems.append(f'{objects_dir}: no objects of the Python module to check')
        needed = nm(objects, True) if objects else set()
        problems += [f'python/ calls {sym}, which no public header (include/gradscope/) names'
                     for sym in python_call_violations(needed, names)]
    return problems


def write_tree(root, files):
    for rel, text in files.items():
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, 'w', encoding='utf-8') as fh:
            fh.write(text)


def self_test_inspector():
    """An inspector folder including upward (by name and by path) or sideways, a source in no
    folder, a header name in two folders, a cycle, and an upward call are each reported; a
    use the graph allows, directly or through another folder, is not."""
    with tempfile.TemporaryDirectory() as root:
        src = os.path.join(root, 'inspector')
        write_tree(src, {
            'model/text/escape.h': '',
            'model/replay/replay.h': '#include "escape.h"\n',
            'model/replay/replay.c': '#include "replay.h"\n#include "graph.h"\n',
            'graph/graph.h': '#include "replay.h"\n',
            'graph/graph.c': '#include "graph.h"\n#include "escape.h"\n#include <glib.h>\n',
            'cli/cli.c': '#include "graph.h"\n#include "../app/window.h"\n',
            'app/window.h': '#include "graph.h"\n',
            'app/pages/page.h': '#include "window.h"\n#include "cli-private.h"\n',
            'app/pages/cli-private.h': '',
            'stray/loose.c': '',
        })
        layers = os.path.join(root, 'layers.txt')
        write_tree(root, {'layers.txt': '# bottom first\nmodel/text:\nmodel/replay: model/text\n'
                          'graph: model/replay\ncli: graph\napp/pages: graph\n'
                          'app: app/pages # the window on top\n'})
        graph = read_graph(layers)
        assert graph_problems(graph) == [], graph_problems(graph)
        problems, found = folder_include_violations(src, graph)
        assert problems == ['stray/loose.c is in no folder of the layers file'], problems
        assert sorted(found) == [('app/pages/page.h', 'window.h', 'app'),
                                 ('cli/cli.c', '../app/window.h', 'app'),
                                 ('model/replay/replay.c', 'graph.h', 'graph')], found
        write_tree(src, {'cli/window.h': ''})
        problems, _ = folder_include_violations(src, graph)
        assert 'window.h is in more than one folder: app/window.h, cli/window.h' in problems, \
            problems
        cyclic = {'a': ['b'], 'b': ['c'], 'c': ['a'], 'd': ['e']}
        assert graph_problems(cyclic) == ['layers: d uses e, which is not listed',
                                          'layers: a cycle: a -> b -> c -> a'], \
            graph_problems(cyclic)
    defined = {'model/replay': {'gs_replay_new'}, 'graph': {'gs_graph_build'},
               'app': {'gs_window_new'}, 'cli': {'gs_cli_run'}}
    needed = {'model/replay': {'gs_graph_build', 'g_malloc'}, 'graph': {'gs_replay_new'},
              'app': {'gs_replay_new', 'gs_cli_run'}, 'cli': {'gs_graph_build'}}
    graph = {'model/text': [], 'model/replay': ['model/text'], 'graph': ['model/replay'],
             'cli': ['graph'], 'app': ['graph']}
    got = folder_call_violations(defined, needed, graph)
    assert got == [('app', 'gs_cli_run', 'cli'), ('model/replay', 'gs_graph_build', 'graph')], \
        got
    assert object_source('/b/inspector/app/x.a.p/capture_gs-capture-page.c.o', '/b') == \
        'inspector/app/capture/gs-capture-page.c'
    assert object_source('/b/inspector/app/x.p/meson-generated_.._gs-resources.c.o', '/b') is None


def self_test_python():
    """The module including an engine-internal header (by path or by name) or a public path
    that does not exist, or needing an internal or unnamed gs_ symbol, is reported; its own
    headers, system headers and the public API are not."""
    with tempfile.TemporaryDirectory() as root:
        write_tree(root, {
            'include/gradscope/gradscope.h': 'gs_tensor gs_add(gs_tensor a, gs_tensor b);\n',
            'engine/core/core-impl.h': '',
            'python/gs-py.h': '#include <Python.h>\n#include <gradscope/gradscope.h>\n',
            'python/module.c': '#include "gs-py.h"\n#include "../engine/core/core-impl.h"\n'
                               '#include "core-impl.h"\n#include "gradscope/internal.h"\n',
        })
        got = python_include_violations(os.path.join(root, 'python'),
                                        os.path.join(root, 'include', 'gradscope'))
        assert got == [('module.c', '../engine/core/core-impl.h'), ('module.c', 'core-impl.h'),
                       ('module.c', 'gradscope/internal.h')], got
    got = python_call_violations({'gs_add', 'gs__intern', 'gs_secret', 'PyLong_FromLong'},
                                 {'gs_add', 'gs_tensor'})
    assert got == ['gs__intern', 'gs_secret'], got


def self_test():
    """The checker must be able to fail: an upward include (by name and by path) and an
    upward call are each reported, and a downward one is not."""
    names = ['base', 'core', 'scope']
    with tempfile.TemporaryDirectory() as src:
        for name, files in {
            'base': {'base.h': '', 'a.c': '#include "base.h"\n'},
            'core': {'core-impl.h': '#include "base.h"\n',
                     'x.c': '#include "core-impl.h"\n#include "scope-impl.h"\n'},
            'scope': {'scope-impl.h': '#include "core-impl.h"\n',
                      'y.c': '#include "../core/core-impl.h"\n'},
        }.items():
            os.mkdir(os.path.join(src, name))
            for f, text in files.items():
                with open(os.path.join(src, name, f), 'w', encoding='utf-8') as fh:
                    fh.write(text)
        with open(os.path.join(src, 'base', 'b.c'), 'w', encoding='utf-8') as fh:
            fh.write('#include "../scope/scope-impl.h"\n')
        got = sorted(include_violations([(n, [os.path.join(src, n)]) for n in names]))
        want = [('base/b.c', '../scope/scope-impl.h', 'scope'),
                ('core/x.c', 'scope-impl.h', 'scope')]
        assert got == want, got
    defined = {'base': {'gs__intern'}, 'core': {'gs__lookup'}, 'scope': {'gs__own_new'}}
    needed = {'core': {'gs__own_new', 'gs__intern', 'malloc'}, 'scope': {'gs__lookup'}}
    got = call_violations(defined, needed, names)
    assert got == [('core', 'gs__own_new', 'scope')], got
    assert parse_layer('capture=/s/capture:/b/a.a,/b/b.a') == ('capture', ['/s/capture'],
                                                                ['/b/a.a', '/b/b.a'])
    self_test_inspector()
    self_test_python()
    print('self-test: upward includes and calls are reported, downward ones are not, for the '
          'engine, the inspector and the Python module')


def main(argv):
    if argv[1:] == ['--self-test']:
        self_test()
        return 0
    if argv[1] == '--inspector':
        graph, problems = check_inspector(*argv[2:5])
        for p in problems:
            print(p)
        print(f'{len(graph)} inspector folders, {len(problems)} uses the layers do not allow')
        return 1 if problems else 0
    if argv[1] == '--python':
        problems = check_python(*argv[2:5])
        for p in problems:
            print(p)
        print(f'python: {len(problems)} uses of more than the public API')
        return 1 if problems else 0
    layers = [parse_layer(arg) for arg in argv[1:]]
    problems = check(layers)
    for p in problems:
        print(p)
    print(f'{len(layers)} layers, {len(problems)} upward uses')
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
