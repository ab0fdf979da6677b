#!/usr/bin/env python3
"""Every relative link in the README and docs/*.md must resolve: the file (or directory) exists,
and a #fragment names a heading of the target page (GitHub's anchors). External links (http:,
https:, mailto:) are not followed. Links inside code (fenced blocks, `spans`) are not links.

Usage: check_links.py REPO_ROOT   -- exits 1 and names every broken link."""
import os
import re
import sys

LINK = re.compile(r'!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)')


def prose_lines(text):
    """The page's lines outside fenced code blocks, with inline code spans blanked."""
    fenced = False
    for number, line in enumerate(text.split('\n'), 1):
        if line.lstrip().startswith('```'):
            fenced = not fenced
            continue
        if not fenced:
            yield number, re.sub(r'`[^`]*`', '``', line)


def heading_texts(path):
    """The text of each heading outside fenced code, code spans' text kept."""
    with open(path, encoding='utf-8') as f:
        text = f.read()
    fenced = False
    for line in text.split('\n'):
        if line.lstrip().startswith('```'):
            fenced = not fenced
            continue
        if not fenced:
            m = re.match(r'#{1,6}\s+(.*?)\s*#*\s*$', line)
            if m:
                yield m.group(1)


def page_anchors(path):
    seen = {}
    out = set()
    for title in heading_texts(path):
        slug = re.sub(r'[^\w\- ]', '', title.lower()).replace(' ', '-')
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        out.add(slug if n == 0 else f'{slug}-{n}')
    return out


def pages(root):
    found = [os.path.join(root, 'README.md')]
    docs = os.path.join(root, 'docs')
    for dirpath, _, files in os.walk(docs):
        found += [os.path.join(dirpath, f) for f in sorted(files) if f.endswith('.md')]
    return found


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else '.')
    broken = []
    checked = 0
    for page in pages(root):
        with open(page, encoding='utf-8') as f:
            text = f.read()
        for number, line in prose_lines(text):
            for target in LINK.findall(line):
                if re.match(r'[a-z][a-z0-9+.-]*:', target):
                    continue  # http:, https:, mailto:
                checked += 1
                where = f'{os.path.relpath(page, root)}:{number}: {target}'
                file_part, _, fragment = target.partition('#')
                dest = os.path.normpath(os.path.join(os.path.dirname(page), file_part)) if file_part else page
                if not os.path.exists(dest):
                    broken.append(f'{where}: no such file {os.path.relpath(dest, root)}')
                elif fragment and dest.endswith('.md') and fragment not in page_anchors(dest):
                    broken.append(f'{where}: no heading #{fragment} in {os.path.relpath(dest, root)}')
    for b in broken:
        print(b)
    print(f'{checked} relative links checked, {len(broken)} broken')
    return 1 if broken or checked == 0 else 0


if __name__ == '__main__':
    sys.exit(main())
