#!/usr/bin/env python3
"""Every test suite has a time limit: a test that hangs fails on its own, at its limit, instead of holding the run.

Checks each top-level type in Tests/ that declares `@Test`s for a `.timeLimit(...)` trait in its `@Suite`
(suites nested in it, and extensions of it, inherit the limit). Uses only the standard library."""
import glob
import re
import sys

DECLARATION = re.compile(r'^(@Suite(\([^\n]*\))?\s+)?((public|private|fileprivate) )?(final class|struct|enum|actor|class) (\w+)')
missing = []
for path in sorted(glob.glob('Tests/**/*.swift', recursive=True)):
    lines = open(path).read().split('\n')
    starts = [i for i, line in enumerate(lines) if DECLARATION.match(line)]
    for n, start in enumerate(starts):
        end = starts[n + 1] if n + 1 < len(starts) else len(lines)
        if '@Test' not in '\n'.join(lines[start:end]):
            continue
        first = start
        while first > 0 and lines[first - 1].startswith('@'):
            first -= 1
        if 'timeLimit' not in '\n'.join(lines[first:start + 1]):
            missing.append(f'{path}:{start + 1}: {DECLARATION.match(lines[start]).group(6)} has tests but no time limit')
if missing:
    print('\n'.join(missing), file=sys.stderr)
    sys.exit(1)
print(f'check-test-limits: every test suite has a time limit')
