"""README's Layout table against Package.swift: every target is in the table once, with its kind's
family (system library, C, Swift, executable) and, under `may import`, exactly the dependencies
Package.swift declares for it. scripts/lint checks the other half: the imports against Package.swift."""
import os
import re
import unittest

from harness import ROOT

TARGET = re.compile(r'\.(systemLibrary|target|executableTarget)\(\s*name:\s*"([^"]+)"(.*?)\)\s*,\s*$', re.S | re.M)
DEPS = re.compile(r'dependencies:\s*\[([^\]]*)\]', re.S)


def package_targets():
    """{name: (declaration kind, [dependencies])} for every non-test target of Package.swift."""
    text = open(os.path.join(ROOT, "Package.swift"), encoding="utf-8").read()
    targets = {}
    for match in TARGET.finditer(text):
        kind, name, rest = match.groups()
        deps = DEPS.search(rest.split("linkerSettings")[0].split("swiftSettings")[0])
        names = re.findall(r'"([^"]+)"', deps.group(1)) if deps else []
        targets[name] = (kind, names)
    return targets


def readme_rows():
    """{name: (kind cell, [may import])} from the table under README's `### Layout`."""
    text = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    section = text.split("### Layout\n", 1)[1].split("\n### ", 1)[0]
    rows = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 4 or cells[0] in ("target", "---"):
            continue
        imports = [] if cells[3] == "—" else [c.strip() for c in cells[3].split(",")]
        for name in re.findall(r"`([^`]+)`", cells[0]):
            if name in rows:
                raise AssertionError("README's Layout lists %s twice" % name)
            rows[name] = (cells[1], imports)
    return rows


class LayoutTableTest(unittest.TestCase):
    def test_every_target_is_in_the_table_with_its_dependencies(self):
        targets, rows = package_targets(), readme_rows()
        self.assertGreater(len(targets), 12, "Package.swift was not read: %s" % sorted(targets))
        self.assertEqual(sorted(rows), sorted(targets), "README's Layout and Package.swift name other targets")
        for name, (kind, deps) in targets.items():
            cell, imports = rows[name]
            with self.subTest(target=name):
                self.assertEqual(sorted(imports), sorted(deps), "README's may-import for %s" % name)
                family = {"systemLibrary": "system library", "executableTarget": "executable"}.get(kind)
                if family:
                    self.assertTrue(cell.startswith(family), "%s is a %s: %r" % (name, family, cell))
                else:
                    self.assertTrue(cell.startswith(("Swift", "C")), "%s: %r" % (name, cell))


if __name__ == "__main__":
    unittest.main()
