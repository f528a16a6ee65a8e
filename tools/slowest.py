#!/usr/bin/env python3
"""The slowest tests of the last nextest run, from its JUnit report.

    python3 tools/slowest.py [JUNIT_XML] [-n 10]

tools/test.sh prints this after every run; the default report is nextest's default profile's
(target/nextest/default/junit.xml).
"""

import argparse
import xml.etree.ElementTree as ET


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("junit", nargs="?", default="target/nextest/default/junit.xml")
    ap.add_argument("-n", type=int, default=10)
    args = ap.parse_args()
    root = ET.parse(args.junit).getroot()
    cases = []
    for case in root.iter("testcase"):
        cases.append((float(case.get("time", "0")), case.get("name", "?")))
    cases.sort(reverse=True)
    total = sum(t for t, _ in cases)
    print(f"slowest {min(args.n, len(cases))} of {len(cases)} tests (sum of all test times {total:.0f} s):")
    for t, name in cases[: args.n]:
        print(f"  {t:7.1f} s  {name}")


if __name__ == "__main__":
    main()
