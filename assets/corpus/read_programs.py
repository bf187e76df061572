#!/usr/bin/env python3
"""Readers of English / Simplified Chinese string pairs from programs and games packaged in Debian 12 whose
translations are not (only) gettext catalogs of the packages in build_parallel.PACKAGES.

Every reader is a function fn(roots) -> iterator of raw (en, zh) tuples, where roots is {package: folder the
package's .deb was unpacked into with `dpkg-deb -x`}. The strings are raw: build_parallel.clean_pair is run on them
afterwards (placeholders, accelerators, simple markup, length, ratio, ...). A reader drops only what clean_pair
cannot recognise in its own format (Fluent selectors, Mozilla plural lists, WML and Minetest variables, ...).
PROGRAM_SOURCES, at the end, lists the sources: name, Debian packages, reader.

Formats, each with a small parser of its own (standard library only):
  * gettext .mo (read_mo): entries msgid -> msgstr; a context ("ctx\\x04msgid") is stripped, a plural entry keeps
    its singular msgid and msgstr[0] (Chinese has one plural form); the header (msgid "") is dropped.
  * gettext .po (read_po): the same for text catalogs; fuzzy and obsolete (#~) entries are dropped.
  * Fluent .ftl (parse_ftl, ftl_pairs): Mozilla's newer format, aligned by (file, message id) and (file, id.attr).
  * Java-style .properties (parse_properties) and DTD entities (parse_dtd): Mozilla's older formats, by (file, key).
  * Minetest .tr (parse_tr): "English=Translation" lines; the English is itself the key.
  * Qt .qm (read_qm): the binary catalog of lrelease; it stores the source text beside the translation.
  * Unicode CLDR XML (cldr_pairs): display names aligned by element path and attributes.
The only program used is OpenCC's `opencc` command (Debian package opencc) to turn GCompris's Traditional Chinese
(zh_TW) into Simplified Chinese; without it that source yields nothing.
"""
import gettext
import io
import os
import re
import shutil
import struct
import subprocess
import xml.etree.ElementTree as ET
import zipfile

ZH_CN_DIRS = {"zh_CN", "zh_Hans", "zh_HANS", "zh-CN", "zh_CN.UTF-8", "zh_CN.utf8", "zh_CN.GB2312"}


# --- gettext .mo and .po ---

def read_mo(data):
    """The bytes of a gettext .mo file -> list of (msgid, msgstr), read by Python's gettext module. Aligned by
    msgid; the context prefix ("ctx\\x04") is stripped; plural entries keep the singular msgid and the first
    msgstr; the header entry (empty msgid) and entries with an empty msgstr are dropped. Raises ValueError for
    bytes that are not a .mo file."""
    try:
        catalog = gettext.GNUTranslations(io.BytesIO(data))._catalog
    except (OSError, UnicodeDecodeError) as e:
        raise ValueError("not a .mo file (%s)" % e)
    out = []
    for key, value in catalog.items():
        if isinstance(key, tuple):
            if key[1] != 0:
                continue
            key = key[0]
        if key and value:
            out.append((key.split("\x04", 1)[-1], value))
    return out


_C_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "f": "\f", "v": "\v", "\\": "\\", '"': '"',
              "'": "'", "?": "?"}


def _po_unquote(s):
    s = s.strip()
    if len(s) < 2 or s[0] != '"' or s[-1] != '"':
        raise ValueError("bad PO string: %r" % s[:40])
    return re.sub(r"\\(.)", lambda m: _C_ESCAPES.get(m.group(1), m.group(1)), s[1:-1])


def read_po(text):
    """The text of a gettext .po file -> list of (msgid, msgstr), with read_mo's rules; entries flagged fuzzy
    and obsolete entries (#~) are dropped as well."""
    out = []
    entry, field, fuzzy = {}, None, False

    def flush():
        if entry.get("msgid") and not fuzzy:
            zh = entry.get("msgstr", entry.get("msgstr[0]", ""))
            if zh:
                out.append((entry["msgid"], zh))

    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        if line.startswith("#"):
            if field is not None and field != "comment":
                flush()
                entry, field, fuzzy = {}, "comment", False
            field = "comment"
            if line.startswith("#,") and "fuzzy" in line:
                fuzzy = True
            continue
        m = re.match(r"(msgctxt|msgid_plural|msgid|msgstr(?:\[\d+\])?)\s+(\".*\")$", line)
        if m:
            if m.group(1) in ("msgctxt", "msgid") and field not in (None, "comment", "msgctxt"):
                flush()
                entry, fuzzy = {}, False
            field = m.group(1)
            entry[field] = _po_unquote(m.group(2))
        elif line.startswith('"') and field not in (None, "comment"):
            entry[field] += _po_unquote(line)
    if field is not None:
        flush()
    return out


def find_zh_cn_catalogs(root, ext=".mo"):
    """Files ending in ext under a zh_CN/LC_MESSAGES (or zh_Hans, ...) folder of root, sorted."""
    out = []
    for d, _, files in os.walk(root):
        if ZH_CN_DIRS.intersection(d.split(os.sep)) and os.path.basename(d) == "LC_MESSAGES":
            out += [os.path.join(d, f) for f in files if f.endswith(ext)]
    return sorted(out)


def mo_reader(packages):
    """A reader of the zh_CN .mo catalogs of the given packages (every catalog under a zh_CN/LC_MESSAGES
    folder), with read_mo's rules."""
    def read(roots):
        for pkg in packages:
            for path in find_zh_cn_catalogs(roots[pkg]):
                with open(path, "rb") as f:
                    yield from read_mo(f.read())
    read.__doc__ = "gettext .mo catalogs (zh_CN) of %s, aligned by msgid (read_mo)." % ", ".join(packages)
    return read


# --- Mozilla: Fluent (.ftl), .properties, .dtd ---

FTL_ENTRY = re.compile(r"(-?[A-Za-z][A-Za-z0-9_-]*)[ \t]*=[ \t]*(.*)$")
FTL_ATTR = re.compile(r"[ \t]+\.([A-Za-z][A-Za-z0-9_-]*)[ \t]*=[ \t]*(.*)$")
FTL_TERM_REF = re.compile(r"-[A-Za-z][A-Za-z0-9_-]*")
FTL_STRING = re.compile(r'"((?:[^"\\]|\\.)*)"')


def _brace_delta(text, depth):
    """Depth of placeable nesting after text, starting at depth (string literals inside placeables skipped)."""
    i = 0
    while i < len(text):
        c = text[i]
        if c == '"' and depth > 0:
            i += 1
            while i < len(text) and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
        elif c == "{":
            depth += 1
        elif c == "}":
            depth = max(0, depth - 1)
        i += 1
    return depth


def _ftl_pattern(first, cont):
    """Fluent's multiline text: the inline part, then the continuation lines with their common indent removed,
    joined with newlines; blank lines at either end dropped."""
    while cont and not cont[-1].strip():
        cont.pop()
    indents = [len(l) - len(l.lstrip(" ")) for l in cont if l.strip()]
    cut = min(indents) if indents else 0
    lines = ([first.strip()] if first.strip() else []) + [l[cut:].rstrip() for l in cont]
    while lines and not lines[0].strip():
        lines.pop(0)
    return "\n".join(lines).strip()


def parse_ftl(text):
    """Fluent source -> {key: raw pattern}, key being the message id ("-id" for a term) for the value and
    "id.attr" for each attribute. Comments (# ## ###) and junk lines end an entry; a message with attributes only
    has no value key. Placeables ({ ... }) are kept verbatim; select expressions may span lines."""
    entries = {}
    msg = key = None
    first, cont, depth = "", [], 0

    def flush():
        if key is not None:
            value = _ftl_pattern(first, cont)
            if value:
                entries[key] = value

    for line in text.replace("\r\n", "\n").split("\n"):
        if depth == 0 and line[:1] not in ("", " ", "\t"):
            flush()
            m = FTL_ENTRY.match(line)
            msg = key = m.group(1) if m else None
            first, cont = (m.group(2), []) if m else ("", [])
            depth = _brace_delta(first, 0) if m else 0
            continue
        if msg is None:
            continue
        m = FTL_ATTR.match(line) if depth == 0 else None
        if m:
            flush()
            key = msg + "." + m.group(1)
            first, cont = m.group(2), []
            depth = _brace_delta(first, 0)
        else:
            cont.append(line)
            depth = _brace_delta(line, depth)
    flush()
    return entries


def _ftl_unescape(s):
    return re.sub(r"\\(u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{6}|.)",
                  lambda m: chr(int(m.group(1)[1:], 16)) if m.group(1)[0] in "uU" and len(m.group(1)) > 1
                  else m.group(1), s)


def resolve_ftl(pattern, terms, _depth=0):
    """A raw Fluent pattern -> plain text, or None when it cannot be plain: a placeable that is a string literal
    ({ "{" }) becomes its text, a term reference ({ -brand-short-name }) the term's resolved value; any other
    placeable (variable { $n }, message reference, function call, select expression, term attribute) -> None."""
    if _depth > 5:
        return None
    out, i = [], 0
    while i < len(pattern):
        c = pattern[i]
        if c == "}":
            return None
        if c != "{":
            out.append(c)
            i += 1
            continue
        depth, j = 1, i + 1
        while j < len(pattern) and depth:
            if pattern[j] == '"':
                j += 1
                while j < len(pattern) and pattern[j] != '"':
                    j += 2 if pattern[j] == "\\" else 1
            elif pattern[j] == "{":
                depth += 1
            elif pattern[j] == "}":
                depth -= 1
            j += 1
        if depth:
            return None
        inner = pattern[i + 1:j - 1].strip()
        if FTL_STRING.fullmatch(inner):
            out.append(_ftl_unescape(inner[1:-1]))
        elif FTL_TERM_REF.fullmatch(inner) and inner in terms:
            value = resolve_ftl(terms[inner], terms, _depth + 1)
            if value is None:
                return None
            out.append(value)
        else:
            return None
        i = j
    return "".join(out)


# attributes that hold no language: keyboard keys, CSS
FTL_SKIP_ATTRS = {"accesskey", "key", "commandkey", "keycode", "modifiers", "style"}


def ftl_pairs(en_files, zh_files):
    """en_files, zh_files: {aligned path: Fluent source}. Yields (en, zh) for every message value and attribute
    whose key exists in the same file on both sides. Terms ("-id") are not yielded but resolve references on
    their own side (terms of all files of that side; the first definition wins, brand files first). Dropped:
    attributes in FTL_SKIP_ATTRS, and a pair either of whose patterns resolve_ftl cannot make plain."""
    parsed = {}
    for side, files in (("en", en_files), ("zh", zh_files)):
        terms = {}
        per_file = {}
        for path in sorted(files, key=lambda p: ("brand" not in p, p)):
            per_file[path] = entries = parse_ftl(files[path])
            for k, v in entries.items():
                if k.startswith("-") and "." not in k:
                    terms.setdefault(k, v)
        parsed[side] = (per_file, terms)
    (en_parsed, en_terms), (zh_parsed, zh_terms) = parsed["en"], parsed["zh"]
    for path in sorted(set(en_parsed) & set(zh_parsed)):
        en_entries, zh_entries = en_parsed[path], zh_parsed[path]
        for key in en_entries:
            if key.startswith("-") or key not in zh_entries:
                continue
            if "." in key and key.rsplit(".", 1)[1] in FTL_SKIP_ATTRS:
                continue
            en = resolve_ftl(en_entries[key], en_terms)
            zh = resolve_ftl(zh_entries[key], zh_terms)
            if en is not None and zh is not None:
                yield en, zh


_PROP_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "f": "\f"}


def _prop_unescape(s):
    return re.sub(r"\\(u[0-9A-Fa-f]{4}|.)",
                  lambda m: chr(int(m.group(1)[1:], 16)) if len(m.group(1)) == 5
                  else _PROP_ESCAPES.get(m.group(1), m.group(1)), s)


def parse_properties(text):
    """.properties source -> {key: value}. Comment lines start with # or !; a line ending in an odd number of
    backslashes continues on the next (whose leading whitespace is dropped); the key ends at the first unescaped
    "=", ":" or whitespace; escapes \\n \\t \\uXXXX and \\<char> are decoded in keys and values."""
    out = {}
    logical, buf = [], None
    for line in text.replace("\r\n", "\n").split("\n"):
        if buf is not None:
            line = buf + line.lstrip()
            buf = None
        elif not line.strip() or line.lstrip()[:1] in ("#", "!"):
            continue
        trailing = len(line) - len(line.rstrip("\\"))
        if trailing % 2:
            buf = line[:-1]
            continue
        logical.append(line.lstrip())
    if buf is not None:
        logical.append(buf.lstrip())
    for line in logical:
        i = 0
        while i < len(line) and line[i] not in "=: \t\f":
            i += 2 if line[i] == "\\" else 1
        key = line[:i]
        rest = line[i:].lstrip(" \t\f")
        if rest[:1] in ("=", ":"):
            rest = rest[1:].lstrip(" \t\f")
        out[_prop_unescape(key)] = _prop_unescape(rest)
    return out


PROP_SKIP_SUFFIXES = (".accesskey", ".accessKey", ".commandkey", ".key", ".keybinding")
MOZ_PLURAL_ARG = re.compile(r"#\d")
MOZ_LIST = "|"


def properties_pairs(en_files, zh_files):
    """{aligned path: .properties source} on both sides -> (en, zh) for each key present in the same file on both
    sides. Dropped: access/command keys (PROP_SKIP_SUFFIXES), Mozilla plural lists (a "#1" argument, or a
    different number of ";" on the two sides: "one;other" against Chinese's single form), and keyword lists
    separated by "|" (calendar-extract.properties: "last week | sent | email")."""
    for path in sorted(set(en_files) & set(zh_files)):
        en_map, zh_map = parse_properties(en_files[path]), parse_properties(zh_files[path])
        for key, en in en_map.items():
            zh = zh_map.get(key)
            if zh is None or key.endswith(PROP_SKIP_SUFFIXES):
                continue
            if MOZ_PLURAL_ARG.search(en) or MOZ_PLURAL_ARG.search(zh) or en.count(";") != zh.count(";") \
                    or MOZ_LIST in en or MOZ_LIST in zh:
                continue
            yield en, zh


DTD_ENTITY = re.compile(r"<!ENTITY\s+([A-Za-z_][\w.:-]*)\s+(?:\"([^\"]*)\"|'([^']*)')\s*>", re.S)
XML_REF = re.compile(r"&(#x[0-9A-Fa-f]+|#[0-9]+|[A-Za-z_][\w.:-]*);")
XML_PREDEFINED = {"amp": "&", "lt": "<", "gt": ">", "quot": '"', "apos": "'"}


def parse_dtd(text):
    """DTD source (Mozilla's entity files) -> {entity name: raw value}; comments are ignored."""
    text = re.sub(r"<!--.*?-->", "", text, flags=re.S)
    return {m.group(1): m.group(2) if m.group(2) is not None else m.group(3) for m in DTD_ENTITY.finditer(text)}


def resolve_dtd(value, entities, _depth=0):
    """Decodes character and predefined references and expands other entities (&brandShortName;) from entities;
    None when one is unknown."""
    if _depth > 5:
        return None
    out, pos = [], 0
    for m in XML_REF.finditer(value):
        out.append(value[pos:m.start()])
        name = m.group(1)
        if name.startswith("#x"):
            out.append(chr(int(name[2:], 16)))
        elif name.startswith("#"):
            out.append(chr(int(name[1:])))
        elif name in XML_PREDEFINED:
            out.append(XML_PREDEFINED[name])
        elif name in entities:
            sub = resolve_dtd(entities[name], entities, _depth + 1)
            if sub is None:
                return None
            out.append(sub)
        else:
            return None
        pos = m.end()
    out.append(value[pos:])
    return "".join(out)


def dtd_pairs(en_files, zh_files):
    """{aligned path: .dtd source} on both sides -> (en, zh) per entity present in the same file on both sides.
    References to entities of brand*.dtd files of the same side are expanded (those files' own entities, product
    names, are not yielded); a value with another entity reference, or an access/command key entity
    (PROP_SKIP_SUFFIXES), is dropped."""
    parsed = {}
    for side, files in (("en", en_files), ("zh", zh_files)):
        per_file = {p: parse_dtd(t) for p, t in files.items()}
        brand = {}
        for p in sorted(per_file):
            if os.path.basename(p).startswith("brand"):
                for k, v in per_file[p].items():
                    brand.setdefault(k, v)
        parsed[side] = (per_file, brand)
    (en_parsed, en_brand), (zh_parsed, zh_brand) = parsed["en"], parsed["zh"]
    for path in sorted(set(en_parsed) & set(zh_parsed)):
        if os.path.basename(path).startswith("brand"):
            continue
        for key, en in en_parsed[path].items():
            zh = zh_parsed[path].get(key)
            if zh is None or key.endswith(PROP_SKIP_SUFFIXES):
                continue
            en, zh = resolve_dtd(en, en_brand), resolve_dtd(zh, zh_brand)
            if en is not None and zh is not None:
                yield en, zh


def _locale_path(path, locale):
    """Zip member path with its locale folder ("en-US", "zh-CN") replaced by "@", so both sides align."""
    return "/".join("@" if part == locale else part for part in path.split("/"))


def read_zip_texts(path, locale, prefix="", exts=(".ftl", ".properties", ".dtd")):
    """{aligned path: text} of the members of a zip (omni.ja, langpack .xpi) ending in exts; prefix is put
    before each member path (browser/omni.ja's members live under browser/ in the langpack)."""
    out = {}
    with zipfile.ZipFile(path) as z:
        for name in z.namelist():
            if name.endswith(exts):
                out[prefix + _locale_path(name, locale)] = z.read(name).decode("utf-8", "replace")
    return out


def mozilla_pairs(en_texts, zh_texts):
    """Both sides' {aligned path: text} -> (en, zh) from the .ftl, .properties and .dtd files found on both
    sides (ftl_pairs, properties_pairs, dtd_pairs)."""
    for ext, fn in ((".ftl", ftl_pairs), (".properties", properties_pairs), (".dtd", dtd_pairs)):
        yield from fn({p: t for p, t in en_texts.items() if p.endswith(ext)},
                      {p: t for p, t in zh_texts.items() if p.endswith(ext)})


def _find_one(root, pattern):
    for d, _, files in os.walk(root):
        for f in sorted(files):
            if re.fullmatch(pattern, f):
                return os.path.join(d, f)
    raise FileNotFoundError("no file matching %s under %s" % (pattern, root))


def read_firefox(roots):
    """Firefox ESR: the zh-CN langpack .xpi against the en-US strings of omni.ja and browser/omni.ja, aligned by
    (file path with the locale folder masked, message id or key) - see mozilla_pairs."""
    base = os.path.join(roots["firefox-esr"], "usr/lib/firefox-esr")
    en = read_zip_texts(os.path.join(base, "omni.ja"), "en-US")
    en.update(read_zip_texts(os.path.join(base, "browser/omni.ja"), "en-US", prefix="browser/"))
    zh = read_zip_texts(_find_one(roots["firefox-esr-l10n-zh-cn"], r"langpack-zh-CN@.*\.xpi"), "zh-CN")
    return mozilla_pairs(en, zh)


def read_thunderbird(roots):
    """Thunderbird: the zh-CN langpack .xpi against the en-US strings of its omni.ja (usr/share/thunderbird),
    aligned like read_firefox."""
    en = read_zip_texts(os.path.join(roots["thunderbird"], "usr/share/thunderbird/omni.ja"), "en-US")
    zh = read_zip_texts(_find_one(roots["thunderbird-l10n-zh-cn"], r"langpack-zh-CN@.*\.xpi"), "zh-CN")
    return mozilla_pairs(en, zh)


# --- games with formats of their own ---

WML_VARIABLE = re.compile(r"\$[A-Za-z_][\w.|\[\]]*")
WESNOTH_CONTEXT = re.compile(r"^[A-Za-z][A-Za-z0-9_ +]{0,30}\^")


def read_wesnoth(roots):
    """Battle for Wesnoth 1.16: its zh_CN .mo catalogs (read_mo). The "context^" prefix of a msgid
    ("race^Dwarves", "race+female^Dunefolk Human", "unit help^Attacks") is stripped unless the translation starts
    with it too ("x^2 ..." is no context); strings with a WML variable
    ($unit.name, $x1) are dropped (clean_pair knows only $UPPER and ${x})."""
    for en, zh in mo_reader(["wesnoth-1.16-data"])(roots):
        m = WESNOTH_CONTEXT.match(en)
        if m and not zh.startswith(m.group(0)):
            en = en[m.end():]
        if WML_VARIABLE.search(en) or WML_VARIABLE.search(zh):
            continue
        yield en, zh


TR_PLACEHOLDER = re.compile(r"@[1-9]")
LUA_ARG = re.compile(r"\$[1-9]")


def _tr_split(line):
    """A .tr line -> (source, translation) split at the first "=" not escaped as "@="; None without one."""
    i = 0
    while i < len(line):
        if line[i] == "@":
            i += 2
            continue
        if line[i] == "=":
            return line[:i], line[i + 1:]
        i += 1
    return None


def _tr_unescape(s):
    return re.sub(r"@(.)", lambda m: "\n" if m.group(1) == "n" else m.group(1), s)


def parse_tr(text):
    """Minetest's .tr translation file -> list of (source, translation). Lines starting with # are comments
    ("# textdomain: x"); "@=" is "=", "@n" a newline, "@@" "@". Lines with a "@1".."@9" argument and lines
    without a translation are dropped."""
    out = []
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        split = _tr_split(line)
        if split is None or not split[1].strip():
            continue
        en, zh = split
        if TR_PLACEHOLDER.search(en) or TR_PLACEHOLDER.search(zh):
            continue
        out.append((_tr_unescape(en), _tr_unescape(zh)))
    return out


def read_minetest(roots):
    """Minetest: the engine's zh_CN .mo catalog (read_mo; strings with its Lua menu's "$1".."$9" arguments are
    dropped) and every mod's *.zh_CN.tr file (parse_tr)."""
    root = roots["minetest-data"]
    for en, zh in mo_reader(["minetest-data"])(roots):
        if not LUA_ARG.search(en) and not LUA_ARG.search(zh):
            yield en, zh
    for d, _, files in sorted(os.walk(root)):
        for f in sorted(files):
            if f.endswith(".zh_CN.tr"):
                with open(os.path.join(d, f), encoding="utf-8") as fh:
                    yield from parse_tr(fh.read())


def po_reader(package, name="zh_CN.po"):
    """A reader of every file called name (a gettext .po) under the package's root (read_po)."""
    def read(roots):
        for d, _, files in sorted(os.walk(roots[package])):
            if name in files:
                with open(os.path.join(d, name), encoding="utf-8") as f:
                    yield from read_po(f.read())
    read.__doc__ = "every %s (gettext .po) in %s, aligned by msgid (read_po)." % (name, package)
    return read


# --- Unicode CLDR ---

CLDR_SECTIONS = ("localeDisplayNames", "units", "numbers/currencies", "dates/timeZoneNames/metazone",
                 "dates/fields", "characterLabels")
CLDR_BAD_DRAFT = {"unconfirmed", "provisional"}


def _cldr_leaves(root):
    """{(path, attributes) key: (text, draft)} of the leaf elements of a CLDR ldml document."""
    out = {}

    def walk(el, path):
        for child in el:
            attrs = tuple(sorted((k, v) for k, v in child.attrib.items() if k not in ("draft", "references")))
            p = path + ((child.tag, attrs),)
            if len(child):
                walk(child, p)
            elif child.text and child.text.strip():
                out[p] = (child.text.strip(), child.get("draft"))
    walk(root, ())
    return out


def cldr_ldml_pairs(en_xml, zh_xml, sections=CLDR_SECTIONS):
    """Two CLDR ldml documents (bytes) -> (en, zh) for each leaf element with the same path and attributes
    (draft and references ignored) on both sides, inside sections. Dropped: elements named *Pattern/*pattern
    (formats like "{0} per {1}"), the Chinese side marked draft unconfirmed or provisional, and identical texts."""
    en_leaves = _cldr_leaves(ET.fromstring(en_xml))
    zh_leaves = _cldr_leaves(ET.fromstring(zh_xml))
    for key, (en, _) in en_leaves.items():
        if key not in zh_leaves:
            continue
        path = "/".join(tag for tag, _ in key)
        if not any(path.startswith(s + "/") for s in sections) or key[-1][0].lower().endswith("pattern"):
            continue
        zh, draft = zh_leaves[key]
        if draft in CLDR_BAD_DRAFT or zh == en:
            continue
        yield en, zh


def cldr_annotation_pairs(en_xml, zh_xml):
    """CLDR annotations (emoji names) -> (en, zh) per code point's type="tts" name on both sides; the keyword
    lists ("face | grin") are dropped."""
    def names(xml):
        out = {}
        for el in ET.fromstring(xml).iter("annotation"):
            if el.get("type") == "tts" and el.text and el.get("draft") not in CLDR_BAD_DRAFT:
                out[el.get("cp")] = el.text.strip()
        return out
    en, zh = names(en_xml), names(zh_xml)
    for cp in en:
        if cp in zh:
            yield en[cp], zh[cp]


def read_cldr(roots):
    """Unicode CLDR 41: main/en.xml against main/zh.xml (display names of languages, scripts, territories,
    units, currencies, time zones, fields, character labels: cldr_ldml_pairs) and annotations plus
    annotationsDerived en.xml against zh.xml (emoji names: cldr_annotation_pairs)."""
    common = os.path.join(roots["unicode-cldr-core"], "usr/share/unicode/cldr/common")

    def load(*parts):
        with open(os.path.join(common, *parts), "rb") as f:
            return f.read()
    yield from cldr_ldml_pairs(load("main", "en.xml"), load("main", "zh.xml"))
    for folder in ("annotations", "annotationsDerived"):
        yield from cldr_annotation_pairs(load(folder, "en.xml"), load(folder, "zh.xml"))


# --- Qt .qm ---

QM_MAGIC = bytes.fromhex("3CB86418CAEF9C95CD211CBF60A1BDDD")
QM_MESSAGES = 0x69
(QM_END, QM_SOURCE16, QM_TRANSLATION, QM_CONTEXT16, QM_OBSOLETE1, QM_SOURCE, QM_CONTEXT, QM_COMMENT,
 QM_OBSOLETE2) = range(1, 10)


def _qm_text(text):
    try:
        return text.decode("utf-8")
    except UnicodeDecodeError:
        return text.decode("latin-1")


def read_qm(data):
    """The bytes of a Qt .qm file -> list of (context, source, comment, translation) from its messages section.
    Layout: the 16-byte magic, then sections (1-byte tag, 4-byte big-endian length, data); the messages section
    (tag 0x69) is a run of records, each a list of fields ending with tag 1: 3 = translation (4-byte length and
    UTF-16BE text; a length of 0xFFFFFFFF is a null string; one field per plural form), 6 = source text,
    7 = context, 8 = comment (4-byte length, UTF-8 bytes, or Latin-1 when not UTF-8), 5 = an obsolete 4-byte
    field. A record keeps its first translation (Chinese's single plural form); records without a source text
    (id-based catalogs) or without a translation are dropped."""
    if data[:16] != QM_MAGIC:
        raise ValueError("not a .qm file (bad magic)")
    out = []
    pos = 16
    while pos + 5 <= len(data):
        tag, length = data[pos], struct.unpack(">I", data[pos + 1:pos + 5])[0]
        body = data[pos + 5:pos + 5 + length]
        pos += 5 + length
        if tag != QM_MESSAGES:
            continue
        i, rec = 0, {}
        while i < len(body):
            t = body[i]
            i += 1
            if t == QM_END:
                if rec.get("source") and rec.get("translation"):
                    out.append((rec.get("context", ""), rec["source"], rec.get("comment", ""), rec["translation"]))
                rec = {}
                continue
            if t == QM_OBSOLETE1:
                i += 4
                continue
            if t not in (QM_TRANSLATION, QM_SOURCE, QM_CONTEXT, QM_COMMENT, QM_SOURCE16, QM_CONTEXT16):
                raise ValueError("unknown .qm message tag %d at offset %d" % (t, i - 1))
            n = struct.unpack(">I", body[i:i + 4])[0]
            i += 4
            if n == 0xFFFFFFFF:
                continue
            raw = body[i:i + n]
            i += n
            if t == QM_TRANSLATION:
                rec.setdefault("translation", raw.decode("utf-16-be", "replace"))
            elif t in (QM_SOURCE16, QM_CONTEXT16):
                rec["source" if t == QM_SOURCE16 else "context"] = raw.decode("utf-16-be", "replace")
            else:
                rec[{QM_SOURCE: "source", QM_CONTEXT: "context", QM_COMMENT: "comment"}[t]] = _qm_text(raw)
    return out


def qm_reader(package, pattern=r".*_zh_CN\.qm"):
    """A reader of the package's .qm files whose name matches pattern: (source text, translation) of each
    message (read_qm); context and comment are dropped."""
    def read(roots):
        for d, _, files in sorted(os.walk(roots[package])):
            for f in sorted(files):
                if re.fullmatch(pattern, f):
                    with open(os.path.join(d, f), "rb") as fh:
                        for _, source, _, translation in read_qm(fh.read()):
                            yield source, translation
    read.__doc__ = "Qt .qm files %s of %s: source text -> translation (read_qm)." % (pattern, package)
    return read


# --- GCompris: Traditional Chinese through OpenCC ---

OPENCC_CONFIG = "tw2sp.json"  # Taiwan standard -> Simplified, with phrases (軟體 -> 软件, 滑鼠 -> 鼠标)
_NEWLINE_MARK = "\ue000"


def opencc_convert(texts, config=OPENCC_CONFIG):
    """Converts a list of strings with the `opencc` command (one call for all); None when opencc is missing.
    Newlines inside a string are protected with a private-use character."""
    if shutil.which("opencc") is None:
        return None
    joined = "\n".join(t.replace("\r", "").replace("\n", _NEWLINE_MARK) for t in texts) + "\n"
    r = subprocess.run(["opencc", "-c", config], input=joined.encode("utf-8"), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, check=True)
    lines = r.stdout.decode("utf-8").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if len(lines) != len(texts):
        raise ValueError("opencc returned %d lines for %d strings" % (len(lines), len(texts)))
    return [l.replace(_NEWLINE_MARK, "\n") for l in lines]


def read_gcompris(roots):
    """GCompris: gcompris_zh_TW.qm (no zh_CN catalog is shipped) read with read_qm, the Traditional Chinese
    converted to Simplified by OpenCC (OPENCC_CONFIG). Yields nothing when the opencc command is missing."""
    pairs = list(qm_reader("gcompris-qt-data", r"gcompris_zh_TW\.qm")(roots))
    converted = opencc_convert([zh for _, zh in pairs]) if pairs else []
    if converted is None:
        return
    for (en, _), zh in zip(pairs, converted):
        yield en, zh


KDE_EDU = ["kstars-data", "kalzium-data", "kgeography-data", "marble-data", "artikulate", "ktouch-data",
           "parley-data", "kwordquiz", "kig", "kbruch", "kanagram", "khangman", "step", "kturtle", "klettres-data",
           "minuet-data", "blinken", "kmplot", "rocs", "kiten", "ktuberling-data", "cantor", "kalgebra-common"]

PROGRAM_SOURCES = [
    {"name": "firefox-l10n", "packages": ["firefox-esr-l10n-zh-cn", "firefox-esr"], "read": read_firefox},
    {"name": "thunderbird-l10n", "packages": ["thunderbird-l10n-zh-cn", "thunderbird"], "read": read_thunderbird},
    {"name": "kde-edu", "packages": KDE_EDU, "read": mo_reader(KDE_EDU)},
    {"name": "krita", "packages": ["krita-l10n"], "read": mo_reader(["krita-l10n"])},
    {"name": "wesnoth", "packages": ["wesnoth-1.16-data"], "read": read_wesnoth},
    {"name": "widelands", "packages": ["widelands-data"], "read": mo_reader(["widelands-data"])},
    {"name": "minetest", "packages": ["minetest-data"], "read": read_minetest},
    {"name": "supertux", "packages": ["supertux-data"], "read": po_reader("supertux-data")},
    {"name": "tuxpaint", "packages": ["tuxpaint-data"], "read": mo_reader(["tuxpaint-data"])},
    {"name": "cldr", "packages": ["unicode-cldr-core"], "read": read_cldr},
    {"name": "qt", "packages": ["qttranslations5-l10n"], "read": qm_reader("qttranslations5-l10n")},
    {"name": "gcompris", "packages": ["gcompris-qt-data"], "read": read_gcompris},
]
