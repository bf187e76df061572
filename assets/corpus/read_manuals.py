#!/usr/bin/env python3
"""Readers that turn Debian 12 manual packages into raw English/Simplified-Chinese pairs for build_parallel.py.

Each reader is a pure function: it takes {package_name: unpacked_root} (the folders that build_parallel's
fetch_packages fills with `dpkg-deb -x`) and yields (en, zh) tuples of plain text (markup removed, entities
decoded, whitespace collapsed). The caller runs build_parallel.clean_pair on every pair, so length, ratio, path
and placeholder rules are not repeated here; the readers drop what clean_pair cannot see: paragraphs that were
left untranslated (no CJK character on the Chinese side), navigation (headers, footers, tables of contents),
code and command blocks, tables (tables of options, of packages, of commands), and pairs whose alignment is in
doubt. The sources are listed in MANUAL_SOURCES at the end.

  * LibreOffice help (read_libreoffice_help): the HTML help pages keep the .xhp paragraph ids, so a pair is the
    element with the same id (and the same n-th occurrence of that id) in the same page of both languages.
  * DocBook HTML manuals (Debian Reference, FAQ, New Maintainers' Guide, Debian Administrator's Handbook,
    Installation Guide, Debian Edu manual): aligned in document order, section by section (see align_sections).
  * GNOME help (read_gnome_help): Mallard .page files, aligned in document order per page like the DocBook ones.
  * Debian package descriptions translated by the DDTP (read_ddtp): apt's Translation-en and Translation-zh_CN
    indexes, aligned by package + Description-md5. They come from no package: fetch_ddtp(work) runs `apt-get
    update` into a private folder and returns the roots for read_ddtp.

Paragraphs aligned in document order are split into sentences when both sides have the same number of them
(split_pair); a pair whose Chinese side has an ASCII word (2+ letters) that the English lacks is taken as
misaligned and dropped (latin_words_match). Each reader yields a distinct (en, zh) only once.

Only the standard library is used (and apt-get / apt-helper for fetch_ddtp).
"""
import html
import html.parser
import os
import re

CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
WS = re.compile(r"\s+")

VOID = frozenset("area base br col embed hr img input link meta param source track wbr".split())
BLOCK = frozenset(("p h1 h2 h3 h4 h5 h6 div pre table ul ol dl li dt dd blockquote section article aside nav "
                   "header footer form hr address figure figcaption tr td th tbody thead").split())
HEADINGS = frozenset("h1 h2 h3 h4 h5 h6".split())
INLINE = frozenset(("a abbr acronym b bdi bdo big br cite code data del dfn em font i img ins kbd label mark q s "
                    "samp small span strike strong sub sup time tt u var wbr").split())


# --- a tolerant HTML tree ---

class Node:
    __slots__ = ("tag", "attrs", "children", "parent")

    def __init__(self, tag, attrs, parent):
        self.tag, self.attrs, self.children, self.parent = tag, attrs, [], parent

    def classes(self):
        return self.attrs.get("class", "").split()

    def iter(self):
        """All descendant elements (self included), document order."""
        stack = [self]
        while stack:
            node = stack.pop()
            yield node
            stack.extend(reversed([c for c in node.children if isinstance(c, Node)]))


class _TreeBuilder(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.root = Node("#root", {}, None)
        self.stack = [self.root]

    def handle_starttag(self, tag, attrs):
        parent = self.stack[-1]
        if tag == "p" and parent.tag == "p":  # HTML closes an open <p> at the next <p>
            self.stack.pop()
            parent = self.stack[-1]
        node = Node(tag, {k: (v if v is not None else "") for k, v in attrs}, parent)
        parent.children.append(node)
        if tag not in VOID:
            self.stack.append(node)

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag not in VOID and self.stack[-1].tag == tag:
            self.stack.pop()

    def handle_endtag(self, tag):
        for i in range(len(self.stack) - 1, 0, -1):
            if self.stack[i].tag == tag:
                del self.stack[i:]
                return

    def handle_data(self, data):
        self.stack[-1].children.append(data)


def parse_html(text):
    """HTML or XML text -> root Node (tag names lower-case; mismatched end tags are ignored)."""
    builder = _TreeBuilder()
    builder.feed(text)
    builder.close()
    return builder.root


def read_text(path):
    with open(path, "r", encoding="utf-8", errors="replace") as f:
        return f.read()


def norm(text):
    return WS.sub(" ", text).strip()


class Reject(Exception):
    """Raised while flattening a block whose markup cannot be reduced to plain text."""


def flatten(node, rule):
    """Plain text of node's content. rule(element) -> "keep" (descend), "drop" (omit the element), "space"
    (a word break) or "reject" (the whole block is unusable: raises Reject)."""
    out = []

    def walk(n):
        for c in n.children:
            if isinstance(c, str):
                out.append(c)
                continue
            action = rule(c)
            if action == "reject":
                raise Reject(c.tag)
            if action == "space":
                out.append(" ")
            elif action == "keep":
                walk(c)
    walk(node)
    return norm("".join(out))


def has_cjk(text):
    return bool(CJK.search(text))


# --- LibreOffice help ---

LO_CODE_CLASSES = frozenset("code bascode pycode smathcode codeintable".split())


def _lo_rule(node):
    tag, cls = node.tag, node.classes()
    if tag in ("img", "pre", "code", "table", "script", "input", "embed", "object", "video", "iframe"):
        return "reject"
    if tag == "br":
        return "space"
    if LO_CODE_CLASSES.intersection(cls):
        return "reject"
    if "switchinline" in cls:
        return "reject"  # handled by _lo_flatten before flatten sees it
    if tag in BLOCK and tag not in ("p",) and tag not in HEADINGS:
        return "reject"
    return "keep"


def _lo_flatten(node):
    """Text of one LibreOffice help paragraph, or None. A <switchinline> keeps only its default case (the text a
    Linux/Windows user of any module sees); one without a default case, an image, code, or a nested block rejects
    the paragraph."""
    for el in list(node.iter()):
        if "switchinline" in el.classes():
            cases = [c for c in el.children if isinstance(c, Node)]
            default = [c for c in cases if c.attrs.get("id", "").startswith("default")]
            if len(default) != 1:
                return None
            el.children = default[0].children
            el.attrs = {}
    try:
        return flatten(node, _lo_rule)
    except Reject:
        return None


LO_ID = re.compile(r"^(?:par|hd|bm|lang)_")


def lo_paragraphs(page_text):
    """{(id, occurrence): text or None} of one LibreOffice help page's paragraphs and headings."""
    root = parse_html(page_text)
    area = next((n for n in root.iter() if n.attrs.get("id") == "DisplayArea"), None)
    if area is None:
        return {}
    out, seen = {}, {}
    for n in area.iter():
        ident = n.attrs.get("id", "")
        if (n.tag == "p" or n.tag in HEADINGS) and LO_ID.match(ident):
            k = seen.get(ident, 0)
            seen[ident] = k + 1
            out[(ident, k)] = _lo_flatten(n)
    return out


def _lang_dir(root, parts):
    path = os.path.join(root, *parts)
    return path if os.path.isdir(path) else None


def read_libreoffice_help(roots, en_pkg="libreoffice-help-en-us", zh_pkg="libreoffice-help-zh-cn"):
    """LibreOffice help, HTML pages under usr/share/libreoffice/help/<lang>/text/. Aligns by page path + paragraph
    id (ids come from the .xhp sources; an id repeated in one page, by an embedded section, is matched by its
    n-th occurrence). A paragraph is split into sentence pairs when split_sentences can, else kept whole (the id
    makes the alignment certain, so no Latin-word check). Drops: paragraphs whose Chinese has no CJK
    (untranslated, ~1/3 of them), empty ones, paragraphs with images, code (<pre>, class code/bascode/pycode/...),
    nested blocks, or a switchinline without a default case. Yields each distinct (en, zh) once."""
    en_dir = _lang_dir(roots[en_pkg], ["usr", "share", "libreoffice", "help", "en-US", "text"])
    zh_dir = _lang_dir(roots[zh_pkg], ["usr", "share", "libreoffice", "help", "zh-CN", "text"])
    if not en_dir or not zh_dir:
        return
    seen = set()
    for dirpath, _, files in sorted(os.walk(en_dir)):
        for name in sorted(files):
            if not name.endswith(".html"):
                continue
            rel = os.path.relpath(os.path.join(dirpath, name), en_dir)
            zh_path = os.path.join(zh_dir, rel)
            if not os.path.exists(zh_path):
                continue
            en_pars = lo_paragraphs(read_text(os.path.join(dirpath, name)))
            zh_pars = lo_paragraphs(read_text(zh_path))
            for key, en in en_pars.items():
                zh = zh_pars.get(key)
                if not en or not zh or not has_cjk(zh):
                    continue
                for pair in split_sentences(en, zh) or [(en, zh)]:
                    if pair not in seen and has_cjk(pair[1]):
                        seen.add(pair)
                        yield pair


# --- document-order alignment (DocBook HTML, Mallard) ---

SECTION_CLASSES = frozenset(("section sect1 sect2 sect3 sect4 sect5 simplesect chapter appendix preface article "
                             "book part reference refentry refsect1 refsect2 glossary bibliography colophon index "
                             "dedication acknowledgements legalnotice abstract footnotes").split())
# subtrees that are never text to translate: navigation, tables of contents, code, tables, images, scripts
SKIP_CLASSES = frozenset(("navheader navfooter toc list-of-tables list-of-figures list-of-examples "
                          "list-of-procedures list-of-equations table informaltable screen programlisting "
                          "synopsis cmdsynopsis funcsynopsis literallayout mediaobject figure informalfigure "
                          "address revhistory author authorgroup copyright docnav").split())
SKIP_TAGS = frozenset("head script style pre table nav header footer img object svg math code-block".split())
CODE_TAGS = frozenset("code tt kbd samp var".split())
CODE_CLASSES = frozenset("command userinput computeroutput filename literal option parameter replaceable "
                         "envar function varname prompt systemitem cmd code sys input output file".split())
FOOTNOTE_MARK = frozenset(["footnote"])

EN_TITLE_NUMBER = re.compile(r"^(?:(?:Chapter|Appendix|Part|Section|Example|Table|Figure)\s+)?"
                             r"(?:[0-9]+|[A-Z](?=\.))(?:\.[0-9]+)*\.?\s+")
ZH_TITLE_NUMBER = re.compile(r"^(?:第\s*[0-9一二三四五六七八九十百]+\s*[章部节篇]\s*|附录\s*[A-Z]\.?\s*|"
                             r"(?:例|例子|示例|范例|表|表格|图)\s*[0-9]+(?:\.[0-9]+)*\.?\s*)?"
                             r"(?:(?:[0-9]+|[A-Z](?=\.))(?:\.[0-9]+)*\.?\s*)?")


class Unit:
    """One block of running text in document order: kind "h" (heading), "t" (caption) or "p" (anything else);
    text is None when the block is unusable (mostly code) but still counts for the alignment."""
    __slots__ = ("kind", "text", "section")

    def __init__(self, kind, text, section):
        self.kind, self.text, self.section = kind, text, section


def _is_section(node, section_tags):
    return node.tag in section_tags or bool(SECTION_CLASSES.intersection(node.classes()))


REJECT_TAGS = frozenset(["xref-empty"])  # set by prepare hooks on inline content that cannot become text


def _inline_rule(node):
    cls = node.classes()
    if node.tag == "br":
        return "space"
    if node.tag in REJECT_TAGS:
        return "reject"
    if node.tag in SKIP_TAGS or FOOTNOTE_MARK.intersection(cls) and node.tag in ("a", "sup"):
        return "drop"
    if "indexterm" in cls or node.tag in ("indexterm", "desc", "credit", "info"):
        return "drop"
    return "keep"


def _code_chars(nodes):
    n = 0
    for node in nodes:
        if isinstance(node, str):
            continue
        if node.tag in CODE_TAGS or CODE_CLASSES.intersection(node.classes()):
            n += len(norm(flatten(node, _inline_rule)))
        else:
            n += _code_chars(node.children)
    return n


def _run_text(nodes):
    """(text, code_fraction) of a run of inline nodes."""
    holder = Node("#run", {}, None)
    holder.children = nodes
    try:
        text = flatten(holder, _inline_rule)
    except Reject:
        text = flatten(holder, lambda n: "drop" if n.tag in REJECT_TAGS else "keep")
        return (text or None), 1.0
    return text, (_code_chars(nodes) / len(text) if text else 0.0)


def extract_units(root, inline_tags=INLINE, section_tags=(), heading_tags=HEADINGS, title_classes=("title",),
                  skip_tags=SKIP_TAGS, skip_classes=SKIP_CLASSES, code_block_tags=(), code_max=0.5):
    """Walks a parsed document and returns [Unit] in document order. Each maximal run of inline content (text and
    elements in inline_tags) inside any other element is a unit; a unit belongs to its innermost section (a DocBook HTML div.section/chapter/..., or
    an element whose tag is in section_tags), numbered in document order. Units whose text is more than code_max
    code (<code>, <tt>, class literal/command/...) get text None."""
    units = []
    counter = [0]

    def emit(nodes, kind, section):
        text, code = _run_text(nodes)
        if not text:
            return
        units.append(Unit(kind, None if code > code_max else text, section))

    def walk(node, section):
        if node is not root and (node.tag in skip_tags or skip_classes.intersection(node.classes())):
            return
        if node is not root and _is_section(node, section_tags):
            counter[0] += 1
            section = counter[0]
        if node.tag in code_block_tags:
            text, _ = _run_text(node.children)
            if text:
                units.append(Unit("p", None, section))
            return
        if node.tag in heading_tags:
            kind = "h"
        elif set(title_classes).intersection(node.classes()) or node.tag == "title":
            kind = "t"
        else:
            kind = "p"
        run = []
        for c in node.children:
            if isinstance(c, Node) and (c.tag not in inline_tags or c.tag in skip_tags
                                        or skip_classes.intersection(c.classes())):
                emit(run, kind, section)
                run = []
                walk(c, section)
            else:
                run.append(c)
        emit(run, kind, section)

    walk(root, 0)
    return units


def strip_title_number(en, zh):
    return EN_TITLE_NUMBER.sub("", en), ZH_TITLE_NUMBER.sub("", zh)


EN_SENTENCE_END = re.compile(r"(?<=[.?!])[\"”’)]?\s+(?=[\"“(]?[A-Z])")
ZH_SENTENCE_END = re.compile(r"(?<=[。？！])[”’」』）)]?\s*")
# words after which ". " does not end a sentence
EN_ABBREV = re.compile(r"(?:\b(?:e\.g|i\.e|etc|vs|cf|Mr|Mrs|Dr|St|No|Fig|Sec|Ch|approx|resp|incl|al)|\b[A-Z])\.$")


def split_en(text):
    parts, start = [], 0
    for m in EN_SENTENCE_END.finditer(text):
        if EN_ABBREV.search(text[max(0, m.start() - 8):m.start()].rstrip("\"”’)")):
            continue
        parts.append(text[start:m.end()].strip())
        start = m.end()
    parts.append(text[start:].strip())
    return [p for p in parts if p]


def split_zh(text):
    parts, start = [], 0
    for m in ZH_SENTENCE_END.finditer(text):
        if m.end() == len(text):
            break
        parts.append(text[start:m.end()].strip())
        start = m.end()
    parts.append(text[start:].strip())
    return [p for p in parts if p]


ASCII_WORD = re.compile(r"[A-Za-z]{2,}")
EN_WORD = re.compile(r"[A-Za-z]+")


def latin_words_match(en, zh):
    """True when every ASCII word of 2+ letters on the Chinese side also occurs in the English (case-insensitive):
    program names, commands and acronyms are copied by translators, so a missing one means a misalignment."""
    words = set(w.lower() for w in EN_WORD.findall(en))
    return all(w.lower() in words for w in ASCII_WORD.findall(zh))


MAX_WHOLE_WORDS = 40


def split_sentences(en, zh):
    """[(en sentence, zh sentence)] when both sides split into the same number (2 or more) of sentences and
    every sentence pair passes latin_words_match; else []."""
    es, zs = split_en(en), split_zh(zh)
    if len(es) > 1 and len(es) == len(zs):
        pairs = list(zip(es, zs))
        if all(latin_words_match(e, z) for e, z in pairs):
            return pairs
    return []


def split_pair(en, zh):
    """An aligned paragraph -> its sentence pairs when both sides split into the same number of sentences and
    every sentence pair passes latin_words_match; else [(en, zh)] when the English has at most 40 words and the
    pair passes latin_words_match; else []."""
    pairs = split_sentences(en, zh)
    if pairs:
        return pairs
    if len(en.split()) <= MAX_WHOLE_WORDS and latin_words_match(en, zh):
        return [(en, zh)]
    return []


NAV_TEXT = re.compile(r"^(?:Prev|Next|Up|Home|Previous|Contents|Table of Contents|Index|Top|Back|"
                      r"(?:Chapter|Appendix|Part|Section)\s+[0-9A-Z.]+)$|^上一[页章节]|^下一[页章节]", re.IGNORECASE)


FOOTNOTE_LEAD = re.compile(r"^\[[0-9]+\]\s*")  # the number before a DocBook footnote's text


def _pair_ok(en, zh):
    return bool(en and zh and has_cjk(zh) and not NAV_TEXT.match(en) and not NAV_TEXT.match(zh))


def align_sections(en_units, zh_units, min_latin_agreement=0.67):
    """Pairs two documents' units section by section, in document order. Sections are matched by their number
    when both documents have as many sections, else the documents are not aligned at all. Inside a section the
    units must have the same count and the same kinds (heading/caption/paragraph) in the same order, else the
    section is skipped. A section is skipped too when fewer than min_latin_agreement of its unit pairs that carry
    Latin words on the Chinese side pass latin_words_match (a sign of a shifted alignment). Then each kept pair
    is split into sentences (split_pair); untranslated units (no CJK), code units and navigation words drop."""
    def by_section(units):
        out = {}
        for u in units:
            out.setdefault(u.section, []).append(u)
        return out
    en_s, zh_s = by_section(en_units), by_section(zh_units)
    if sorted(en_s) != sorted(zh_s):
        return
    for sec in sorted(en_s):
        eu, zu = en_s[sec], zh_s[sec]
        if len(eu) != len(zu) or any(a.kind != b.kind for a, b in zip(eu, zu)):
            continue
        pairs = []
        for a, b in zip(eu, zu):
            if a.text is None or b.text is None:
                continue
            en, zh = FOOTNOTE_LEAD.sub("", a.text), FOOTNOTE_LEAD.sub("", b.text)
            if a.kind in ("h", "t"):
                en, zh = strip_title_number(en, zh)
            pairs.append((en, zh))
        checked = [latin_words_match(e, z) for e, z in pairs if ASCII_WORD.search(z) and has_cjk(z)]
        if checked and sum(checked) < min_latin_agreement * len(checked):
            continue
        for en, zh in pairs:
            if not _pair_ok(en, zh):
                continue
            for e, z in split_pair(en, zh):
                if _pair_ok(e, z):
                    yield e, z


def html_units(path, prepare=None):
    root = parse_html(read_text(path))
    if prepare:
        prepare(root)
    return extract_units(root)


def align_html_files(file_pairs, prepare=None):
    """[(en_path, zh_path)] of DocBook HTML pages -> distinct (en, zh) pairs (align_sections per page).
    prepare(root), when given, edits each parsed page before its units are extracted."""
    seen = set()
    for en_path, zh_path in file_pairs:
        for pair in align_sections(html_units(en_path, prepare), html_units(zh_path, prepare)):
            if pair not in seen:
                seen.add(pair)
                yield pair


def _pages(en_dir, zh_dir, en_suffix, zh_suffix):
    """Pairs of same-named pages: en_dir/NAME<en_suffix> with zh_dir/NAME<zh_suffix>."""
    if not os.path.isdir(en_dir) or not os.path.isdir(zh_dir):
        return []
    out = []
    for name in sorted(os.listdir(en_dir)):
        if name.endswith(en_suffix):
            zh = os.path.join(zh_dir, name[:-len(en_suffix)] + zh_suffix)
            if os.path.isfile(zh):
                out.append((os.path.join(en_dir, name), zh))
    return out


def read_debian_reference(roots):
    """Debian Reference (debian-reference-en, debian-reference-zh-cn): usr/share/debian-reference/NAME.en.html
    vs NAME.zh-cn.html, aligned in document order by align_sections."""
    sub = os.path.join("usr", "share", "debian-reference")
    return align_html_files(_pages(os.path.join(roots["debian-reference-en"], sub),
                                   os.path.join(roots["debian-reference-zh-cn"], sub), ".en.html", ".zh-cn.html"))


def read_debian_faq(roots):
    """Debian FAQ (debian-faq, debian-faq-zh-cn): usr/share/doc/debian/FAQ/NAME.en.html vs
    FAQ/zh-cn/NAME.zh-cn.html, aligned in document order by align_sections."""
    sub = os.path.join("usr", "share", "doc", "debian", "FAQ")
    return align_html_files(_pages(os.path.join(roots["debian-faq"], sub),
                                   os.path.join(roots["debian-faq-zh-cn"], sub, "zh-cn"), ".en.html", ".zh-cn.html"))


def read_maint_guide(roots):
    """Debian New Maintainers' Guide (maint-guide, maint-guide-zh-cn): usr/share/doc/maint-guide/html/NAME.en.html
    vs usr/share/doc/maint-guide-zh-cn/html/NAME.zh-cn.html, aligned by align_sections."""
    return align_html_files(_pages(
        os.path.join(roots["maint-guide"], "usr", "share", "doc", "maint-guide", "html"),
        os.path.join(roots["maint-guide-zh-cn"], "usr", "share", "doc", "maint-guide-zh-cn", "html"),
        ".en.html", ".zh-cn.html"))


def drop_sidebar_labels(root):
    """The Handbook's sidebar titles start with an emphasised label ("VOCABULARY", "BACK TO BASICS", "关键词")
    that is not part of the title (and is sometimes left in English): removes it."""
    for box in root.iter():
        if "sidebar" not in box.classes():
            continue
        title = next((n for n in box.iter() if n.tag == "p" and "title" in n.classes()), None)
        if title is None:
            continue
        holder = title
        while True:
            first = next((c for c in holder.children if isinstance(c, Node) or c.strip()), None)
            if isinstance(first, Node) and first.tag == "strong":
                holder = first
                continue
            if isinstance(first, Node) and "emphasis" in first.classes():
                holder.children.remove(first)
            break


def read_debian_handbook(roots):
    """The Debian Administrator's Handbook (one package, debian-handbook, all languages):
    usr/share/doc/debian-handbook/html/en-US/NAME.html vs zh-CN/NAME.html, aligned by align_sections; the
    sidebar labels are removed from sidebar titles (drop_sidebar_labels)."""
    base = os.path.join(roots["debian-handbook"], "usr", "share", "doc", "debian-handbook", "html")
    return align_html_files(_pages(os.path.join(base, "en-US"), os.path.join(base, "zh-CN"), ".html", ".html"),
                            prepare=drop_sidebar_labels)


def read_installation_guide(roots):
    """The Installation Guide (installation-guide-amd64, all languages): usr/share/doc/installation-guide-amd64/
    en/NAME.html vs zh_CN/NAME.html, aligned by align_sections."""
    base = os.path.join(roots["installation-guide-amd64"], "usr", "share", "doc", "installation-guide-amd64")
    return align_html_files(_pages(os.path.join(base, "en"), os.path.join(base, "zh_CN"), ".html", ".html"))


def read_debian_edu_doc(roots):
    """The Debian Edu manuals (debian-edu-doc-en, debian-edu-doc-zh-cn): usr/share/doc/debian-edu-doc-<lang>/
    debian-edu-*-manual.html (one page per manual), aligned by align_sections."""
    en = os.path.join(roots["debian-edu-doc-en"], "usr", "share", "doc", "debian-edu-doc-en")
    zh = os.path.join(roots["debian-edu-doc-zh-cn"], "usr", "share", "doc", "debian-edu-doc-zh-cn")
    pairs = [(a, b) for a, b in _pages(en, zh, ".html", ".html") if os.path.basename(a).endswith("-manual.html")]
    return align_html_files(pairs)


# --- GNOME help (Mallard) ---

MALLARD_INLINE = frozenset(("em gui guiseq key keyseq keycode link app cmd code file input output sys var span hi "
                            "media xref-empty").split())
MALLARD_SKIP = frozenset(("info comment screen table links media synopsis-code its:rules tt:tt "
                          "uix:overlay uix:thumb code-block").split())


def prepare_mallard(root):
    """Renders Mallard's inline sequences as the help viewer shows them (keyseq "Ctrl+Alt+T", guiseq
    "Settings ▸ Wi-Fi"), marks empty <link xref/> (shown as the target's title, unknown here) and inline images so
    their paragraph is dropped, and turns a block <code> (one not inside a paragraph) into a skipped block."""
    for n in list(root.iter()):
        if n.tag in ("keyseq", "guiseq"):
            sep = "+" if n.tag == "keyseq" else " \u25b8 "
            kids = [c for c in n.children if isinstance(c, Node)]
            n.children = [x for i, c in enumerate(kids) for x in ((sep, c) if i else (c,))]
        elif n.tag == "link" and not "".join(t for t in _texts(n)).strip():
            n.tag = "xref-empty"
        elif n.tag == "media" and n.parent is not None and n.parent.tag in MALLARD_TEXT_BLOCKS | MALLARD_INLINE:
            n.tag = "xref-empty"
        elif n.tag == "code" and n.parent is not None and n.parent.tag not in MALLARD_TEXT_BLOCKS | MALLARD_INLINE:
            n.tag = "screen"
        elif n.tag.startswith("if:") and n.parent is not None and n.parent.tag in MALLARD_TEXT_BLOCKS | MALLARD_INLINE:
            n.tag = "xref-empty"  # a platform-conditional phrase inside a sentence: both variants would show


MALLARD_TEXT_BLOCKS = frozenset("p title subtitle desc td th".split())


def _texts(node):
    for c in node.children:
        if isinstance(c, str):
            yield c
        else:
            yield from _texts(c)


def mallard_units(path):
    root = parse_html(read_text(path))
    prepare_mallard(root)
    return extract_units(root, inline_tags=MALLARD_INLINE, section_tags=("section",), heading_tags=(),
                         title_classes=(), skip_tags=MALLARD_SKIP, skip_classes=frozenset())


def read_gnome_help(roots):
    """GNOME help (gnome-user-docs: all languages in one package): usr/share/help/C/<doc>/NAME.page (English)
    vs zh_CN/<doc>/NAME.page, Mallard XML aligned in document order by align_sections (sections are <section>,
    units are the text runs of <p>, <title>, <item>, ...). Drops the page info (credits, descriptions), <screen>
    and block <code>, tables (mostly keyboard-shortcut tables), images, paragraphs with an empty <link xref/>
    (its text is another page's title) or a platform-conditional phrase."""
    base = os.path.join(roots["gnome-user-docs"], "usr", "share", "help")
    seen = set()
    if not os.path.isdir(os.path.join(base, "C")):
        return
    for doc in sorted(os.listdir(os.path.join(base, "C"))):
        for en_path, zh_path in _pages(os.path.join(base, "C", doc), os.path.join(base, "zh_CN", doc),
                                       ".page", ".page"):
            for pair in align_sections(mallard_units(en_path), mallard_units(zh_path)):
                if pair not in seen:
                    seen.add(pair)
                    yield pair


# --- Debian package descriptions (DDTP) ---

def parse_translation_index(text, field):
    """An apt Translation-<lang> index -> {(package, description_md5): (short, [(paragraph, is_list)])}. field is
    the description field ("Description-en", "Description-zh_CN"). Long paragraphs are separated by " ." lines;
    is_list tells that a line starts with a list marker ("-", "*", "1."); a paragraph's lines are joined with a space, or with nothing where the break falls next to a CJK character or
    full-width punctuation (Chinese is wrapped without spaces)."""
    out = {}
    for stanza in re.split(r"\n\s*\n", text):
        pkg = md5 = None
        desc = []
        in_desc = False
        for line in stanza.split("\n"):
            if line.startswith(" ") and in_desc:
                desc.append(line[1:])
                continue
            in_desc = False
            key, _, value = line.partition(":")
            if key == "Package":
                pkg = value.strip()
            elif key == "Description-md5":
                md5 = value.strip()
            elif key == field:
                desc = [value.strip()]
                in_desc = True
        if pkg and md5 and desc:
            paragraphs, cur = [], []
            for line in desc[1:]:
                if line.strip() == ".":
                    paragraphs.append(cur)
                    cur = []
                else:
                    cur.append(line.strip())
            paragraphs.append(cur)
            out[(pkg, md5)] = (desc[0], [(_join_wrapped(p), any(LIST_ITEM.match(l) for l in p))
                                         for p in paragraphs if p])
    return out


LIST_ITEM = re.compile(r"^\s*(?:[-*+o•]|[0-9]+[.)])\s")
WIDE = re.compile(r"[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef]")


def _join_wrapped(lines):
    text = ""
    for line in lines:
        if text and not (WIDE.match(line[:1]) or WIDE.match(text[-1:])):
            text += " "
        text += line
    return norm(text)


def read_ddtp(roots):
    """Debian package descriptions translated by the DDTP: roots["ddtp"] is a folder with the plain-text apt
    indexes Translation-en and Translation-zh_CN (fetch_ddtp makes it). Aligns by package name + Description-md5
    (the md5 of the English the translation was made from): the short descriptions always, and the long
    descriptions paragraph by paragraph when both have the same number of paragraphs (then split_pair, so a pair
    whose Chinese Latin words are missing in the English is dropped). Drops untranslated text (no CJK),
    paragraphs that are lists (lines starting with "-", "*", "1.") and duplicates."""
    base = roots["ddtp"]
    en = parse_translation_index(read_text(os.path.join(base, "Translation-en")), "Description-en")
    zh = parse_translation_index(read_text(os.path.join(base, "Translation-zh_CN")), "Description-zh_CN")
    seen = set()
    for key in sorted(zh):
        if key not in en:
            continue
        (en_short, en_long), (zh_short, zh_long) = en[key], zh[key]
        pairs = [(en_short, zh_short)] if latin_words_match(en_short, zh_short) else []
        if len(en_long) == len(zh_long):
            for (e, e_list), (z, z_list) in zip(en_long, zh_long):
                if e_list or z_list:
                    continue
                pairs.extend(split_pair(e, z))
        for e, z in pairs:
            if e and z and has_cjk(z) and (e, z) not in seen:
                seen.add((e, z))
                yield e, z


def fetch_ddtp(work):
    """Fetches the bookworm Translation-en and Translation-zh_CN indexes with `apt-get update` into a private
    folder (Dir::State::Lists and Dir::Cache under work, so the system's apt state is not touched), then writes
    them decompressed (apt-helper cat-file reads apt's .lz4/.gz/.xz) as work/ddtp/Translation-en and
    Translation-zh_CN, and the suite's InRelease Date as work/ddtp/Release-Date (the indexes have no version).
    -> {"ddtp": folder} for read_ddtp."""
    import subprocess
    lists = os.path.join(work, "ddtp-apt", "lists")
    cache = os.path.join(work, "ddtp-apt", "cache")
    for d in (os.path.join(lists, "partial"), os.path.join(cache, "archives", "partial")):
        os.makedirs(d, exist_ok=True)
    subprocess.run(["apt-get", "update", "-o", "Dir::State::Lists=" + lists, "-o", "Dir::Cache=" + cache,
                    "-o", "Acquire::Languages=en,zh_CN", "-o", "APT::Sandbox::User=root"],
                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=True)
    out = os.path.join(work, "ddtp")
    os.makedirs(out, exist_ok=True)
    # the indexes change with the archive (no package version): keep the suite's Release date for the stats
    for name in sorted(os.listdir(lists)):
        if re.match(r".*_dists_[a-z]+_InRelease$", name):
            with open(os.path.join(lists, name), encoding="utf-8", errors="replace") as f:
                date = next((l[5:].strip() for l in f if l.startswith("Date:")), "")
            with open(os.path.join(out, "Release-Date"), "w", encoding="utf-8") as f:
                f.write(date + "\n")
            break
    for lang in ("en", "zh_CN"):
        with open(os.path.join(out, "Translation-" + lang), "wb") as f:
            for name in sorted(os.listdir(lists)):
                # only the main suite (bookworm); -updates and -security carry few, newer descriptions
                if re.match(r".*_dists_[a-z]+_main_i18n_Translation-%s(\.\w+)?$" % lang.replace("_", "%5f"), name):
                    r = subprocess.run(["/usr/lib/apt/apt-helper", "cat-file", os.path.join(lists, name)],
                                       stdout=subprocess.PIPE, check=True)
                    f.write(r.stdout + b"\n\n")
    return {"ddtp": out}


# --- the sources, for build_parallel.py ---
# "packages": Debian 12 packages to fetch (build_parallel.fetch_packages) and pass as {package: root} to "read".
# An entry with "fetch" has no package: fetch(work) returns the roots (DDTP's apt indexes) instead.
MANUAL_SOURCES = [
    {"name": "libreoffice-help", "packages": ["libreoffice-help-en-us", "libreoffice-help-zh-cn"],
     "read": read_libreoffice_help},
    {"name": "debian-handbook", "packages": ["debian-handbook"], "read": read_debian_handbook},
    {"name": "debian-reference", "packages": ["debian-reference-en", "debian-reference-zh-cn"],
     "read": read_debian_reference},
    {"name": "installation-guide", "packages": ["installation-guide-amd64"], "read": read_installation_guide},
    {"name": "debian-faq", "packages": ["debian-faq", "debian-faq-zh-cn"], "read": read_debian_faq},
    {"name": "debian-edu-doc", "packages": ["debian-edu-doc-en", "debian-edu-doc-zh-cn"], "read": read_debian_edu_doc},
    {"name": "maint-guide", "packages": ["maint-guide", "maint-guide-zh-cn"], "read": read_maint_guide},
    {"name": "gnome-user-docs", "packages": ["gnome-user-docs"], "read": read_gnome_help},
    {"name": "ddtp", "packages": [], "fetch": fetch_ddtp, "read": read_ddtp},
]
