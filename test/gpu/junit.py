"""JUnit XML for the GPU checks written in Python: one test case a check,
the form scripts/summarize_tests.py sums with the other reports of
test/gpu/run.sh."""

from xml.sax.saxutils import escape, quoteattr


def write(path, suite, cases):
    """Writes `cases`, (name, passed, detail) each, as one test suite; the
    detail of a failed case is its failure's text."""
    failures = sum(not passed for _, passed, _ in cases)
    lines = [f"<testsuite name={quoteattr(suite)} tests=\"{len(cases)}\" "
             f"failures=\"{failures}\">"]
    for name, passed, detail in cases:
        head = f"<testcase classname={quoteattr(suite)} name={quoteattr(name)}"
        lines.append(f"{head}/>" if passed else
                     f"{head}><failure message=\"failed\">{escape(detail)}</failure></testcase>")
    lines.append("</testsuite>")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
