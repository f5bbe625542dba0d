#!/usr/bin/env python3
"""Lists public declarations without a `///` doc comment; exits 1 when there is any.

Members that implement a standard protocol requirement (Codable, CustomStringConvertible, Sequence, OptionSet,
RawRepresentable, Equatable, Hashable, Error, Collection, Middleware) are documented by the protocol and are not
listed. `make test` runs it over Sources/.

    scripts/check-docs.py [SOURCES_DIR]
"""
import pathlib
import re
import sys

DECLARATION = re.compile(r"^\s*(?:@\w+(?:\([^)]*\))?\s+)*(?:public|open)\s+(?:(?:static|final|nonisolated|mutating|override|indirect|convenience|required)\s+)*"
                         r"(?:func|var|let|init|struct|class|enum|protocol|actor|typealias|subscript|case)\b")
REQUIREMENTS = re.compile(r"init\(from decoder|func encode\(to encoder|var description\b|var debugDescription\b|"
                          r"func hash\(into|static func ==|func makeIterator\(|mutating func next\(\)|"
                          r"let rawValue\b|var rawValue\b|init\(rawValue|var errorDescription\b|func makeAsyncIterator\(|"
                          r"subscript\(position: Int\)|var startIndex\b|var endIndex\b|func index\(after")


def undocumented(path: pathlib.Path):
    lines = path.read_text(encoding="utf-8").splitlines()
    for number, line in enumerate(lines):
        if not DECLARATION.match(line) or REQUIREMENTS.search(line):
            continue
        previous = number - 1
        while previous >= 0 and lines[previous].strip().startswith("@"):
            previous -= 1
        if previous < 0 or not lines[previous].strip().startswith("///"):
            yield number + 1, line.strip()


def main() -> int:
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "Sources")
    missing = [(path, number, text) for path in sorted(root.rglob("*.swift")) for number, text in undocumented(path)]
    for path, number, text in missing:
        print(f"{path}:{number}: {text}")
    if missing:
        print(f"{len(missing)} public declarations without a doc comment", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
