"""The ```sh block a document marks for a test with `<!-- KIND: NAME -->` just before it (README's
quick starts, docs/http.md's API shapes): the commands a user would copy, run as written."""
import re
import sys


def marked_block(doc, kind, name):
    text = open(doc, encoding="utf-8").read()
    m = re.search(r"<!-- " + re.escape(kind) + ": " + re.escape(name) + r" -->\s*```sh\n(.*?)```", text, re.S)
    if not m:
        sys.exit(f"{doc} has no block marked '<!-- {kind}: {name} -->' before a ```sh block")
    return m.group(1)
