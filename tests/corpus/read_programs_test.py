"""Tests of assets/corpus/read_programs.py without network: each parser on a tiny hand-made fixture (Fluent,
.properties, DTD, a Mozilla langpack against omni.ja built with zipfile, a .qm built byte by byte, .mo, .po,
Minetest .tr, CLDR XML) and GCompris's OpenCC step with a stand-in `opencc` on PATH.

  /usr/bin/python3 -m unittest discover -s tests/corpus -p '*_test.py'
"""
import os
import shutil
import struct
import sys
import tempfile
import unittest
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "assets", "corpus"))
import read_programs as rp  # noqa: E402
sys.path.insert(0, HERE)
from corpus_fixtures import write_mo as mo_bytes  # noqa: E402

EN_FTL = """\
# A comment
-brand-short-name = Firefox
hello = Hello, world
# a comment ends the message above
multi =
    First line
      indented
    second line
btn = Open { -brand-short-name }
    .title = Open it now
    .accesskey = O
with-var = Hi { $name }
sel = { $n ->
    [one] One tab
   *[other] Many tabs
}
lit = Curly { "{" } brace
ref = { hello } again
## Section
attr-only =
    .label = Label only
"""

ZH_FTL = """\
-brand-short-name = 火狐
hello = 你好，世界
multi =
    第一行
    第二行
btn = 打开 { -brand-short-name }
    .title = 立即打开
    .accesskey = O
with-var = 你好 { $name }
sel = { $n ->
   *[other] { $n } 个标签页
}
lit = 花括号 { "{" }
ref = 再次 { hello }
attr-only =
    .label = 仅标签
only-zh = 多余
"""


def write_mo(path, entries):
    """Writes corpus_fixtures.write_mo(entries) (a GNU .mo file) to path, creating its folder."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(mo_bytes(entries))


def qm_field(tag, payload):
    return bytes([tag]) + struct.pack(">I", len(payload)) + payload


def build_qm():
    """A .qm file: magic, a language section, a hash section, then four message records."""
    records = (
        # a plain message: translation, empty comment, source, context, end
        qm_field(3, "关闭标签页".encode("utf-16-be")) + qm_field(8, b"") + qm_field(6, b"Close Tab")
        + qm_field(7, b"CloseButton") + b"\x01"
        # two translations (plural forms): the first is kept; an obsolete 4-byte field is skipped
        + qm_field(3, "%n 个文件".encode("utf-16-be")) + qm_field(3, "其他".encode("utf-16-be")) + b"\x05\0\0\0\x07"
        + qm_field(6, "%n file(s) – ok".encode("utf-8")) + qm_field(7, b"Ctx") + qm_field(8, b"a note") + b"\x01"
        # a null translation (length 0xFFFFFFFF): dropped
        + b"\x03\xff\xff\xff\xff" + qm_field(6, b"Untranslated") + qm_field(7, b"Ctx") + b"\x01"
        # a Latin-1 source text
        + qm_field(3, "咖啡馆".encode("utf-16-be")) + qm_field(6, "Caf\xe9".encode("latin-1")) + b"\x01"
    )
    return (rp.QM_MAGIC + qm_field(0xA7, b"zh_CN") + qm_field(0x42, b"\0\0\0\x01\0\0\0\0")
            + qm_field(0x69, records))


class FluentTest(unittest.TestCase):
    def test_parse(self):
        self.assertEqual(rp.parse_ftl(EN_FTL), {
            "-brand-short-name": "Firefox",
            "hello": "Hello, world",
            "multi": "First line\n  indented\nsecond line",
            "btn": "Open { -brand-short-name }",
            "btn.title": "Open it now",
            "btn.accesskey": "O",
            "with-var": "Hi { $name }",
            "sel": "{ $n ->\n    [one] One tab\n   *[other] Many tabs\n}",
            "lit": 'Curly { "{" } brace',
            "ref": "{ hello } again",
            "attr-only.label": "Label only",
        })

    def test_resolve(self):
        terms = {"-brand": "Firefox", "-full": "Mozilla { -brand }", "-loop": "{ -loop }"}
        self.assertEqual(rp.resolve_ftl("About { -full }", terms), "About Mozilla Firefox")
        self.assertEqual(rp.resolve_ftl('{ "\\u00e9" } and { "\\"" }', terms), 'é and "')
        self.assertIsNone(rp.resolve_ftl("{ $count } items", terms))
        self.assertIsNone(rp.resolve_ftl("{ -unknown }", terms))
        self.assertIsNone(rp.resolve_ftl("{ -loop }", terms))
        self.assertIsNone(rp.resolve_ftl("{ -brand.gender }", terms))
        self.assertIsNone(rp.resolve_ftl("unbalanced }", terms))
        self.assertIsNone(rp.resolve_ftl("unbalanced { -brand", terms))

    def test_pairs(self):
        pairs = list(rp.ftl_pairs({"a.ftl": EN_FTL, "en-only.ftl": "x = X y"},
                                  {"a.ftl": ZH_FTL, "zh-only.ftl": "x = 某"}))
        self.assertEqual(pairs, [
            ("Hello, world", "你好，世界"),
            ("First line\n  indented\nsecond line", "第一行\n第二行"),
            ("Open Firefox", "打开 火狐"),
            ("Open it now", "立即打开"),
            ("Curly { brace", "花括号 {"),
            ("Label only", "仅标签"),
        ])

    def test_terms_from_brand_file(self):
        en = {"brand.ftl": "-brand-short-name = Firefox\n", "b.ftl": "m = Quit { -brand-short-name }\n"}
        zh = {"brand.ftl": "-brand-short-name = Firefox\n", "b.ftl": "m = 退出 { -brand-short-name }\n"}
        self.assertEqual(list(rp.ftl_pairs(en, zh)), [("Quit Firefox", "退出 Firefox")])


class PropertiesTest(unittest.TestCase):
    EN = ("# comment\n! another comment\ngreeting = Hello\\nworld\ntab.label=Tab \\u00e9 \\\n    continued\n"
          "colon: value with \\\\ backslash\nkey\\=with\\ space value\ntabs=#1 tab;#1 tabs\npl=one tab;many tabs\n"
          "menu.accesskey = M\nlist=a | b\n")
    ZH = ("greeting = 你好\\n世界\ntab.label=标签页 \\\n  续\ncolon: 反斜杠 \\\\ 值\nkey\\=with\\ space 值\n"
          "tabs=#1 个标签页\npl=许多标签页\nmenu.accesskey = M\nlist=甲 | 乙\n")

    def test_parse(self):
        self.assertEqual(rp.parse_properties(self.EN), {
            "greeting": "Hello\nworld", "tab.label": "Tab é continued", "colon": "value with \\ backslash",
            "key=with space": "value", "tabs": "#1 tab;#1 tabs", "pl": "one tab;many tabs", "menu.accesskey": "M",
            "list": "a | b"})

    def test_pairs(self):
        self.assertEqual(list(rp.properties_pairs({"f.properties": self.EN}, {"f.properties": self.ZH})), [
            ("Hello\nworld", "你好\n世界"), ("Tab é continued", "标签页 续"), ("value with \\ backslash", "反斜杠 \\ 值"),
            ("value", "值")])


class DtdTest(unittest.TestCase):
    def test_pairs(self):
        en = {"brand.dtd": '<!ENTITY brandShortName "Thunderbird">',
              "main.dtd": '<!-- <!ENTITY gone "Gone"> -->\n<!ENTITY open.label "Open &brandShortName; &amp; more">\n'
                          "<!ENTITY open.accesskey 'O'>\n<!ENTITY bad \"Hi &unknown;\">\n"
                          "<!ENTITY single 'It&#x2019;s here'>"}
        zh = {"brand.dtd": '<!ENTITY brandShortName "雷鸟">',
              "main.dtd": '<!ENTITY open.label "打开 &brandShortName; &amp; 更多">\n<!ENTITY open.accesskey "O">\n'
                          '<!ENTITY bad "你好 &unknown;">\n<!ENTITY single "在这里">'}
        self.assertEqual(rp.parse_dtd(en["main.dtd"]), {
            "open.label": "Open &brandShortName; &amp; more", "open.accesskey": "O", "bad": "Hi &unknown;",
            "single": "It&#x2019;s here"})
        self.assertEqual(list(rp.dtd_pairs(en, zh)), [
            ("Open Thunderbird & more", "打开 雷鸟 & 更多"), ("It\u2019s here", "在这里")])


class MozillaZipTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp()

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def zip(self, path, members):
        path = os.path.join(self.tmp, path)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with zipfile.ZipFile(path, "w") as z:
            for name, text in members.items():
                z.writestr(name, text.encode("utf-8"))

    def test_read_firefox(self):
        self.zip("ff/usr/lib/firefox-esr/omni.ja", {
            "localization/en-US/toolkit/y.ftl": "save = Save { -brand-short-name } file\n",
            "chrome/en-US/locale/en-US/global/z.properties": "k=Page not found\n",
            "modules/x.mjs": "code"})
        self.zip("ff/usr/lib/firefox-esr/browser/omni.ja", {
            "localization/en-US/branding/brand.ftl": "-brand-short-name = Firefox\n",
            "localization/en-US/browser/x.ftl": "quit = Quit the browser\nen-only = Only here\n"})
        self.zip("l10n/usr/lib/firefox-esr/browser/extensions/langpack-zh-CN@firefox-esr.mozilla.org.xpi", {
            "browser/localization/zh-CN/branding/brand.ftl": "-brand-short-name = Firefox\n",
            "browser/localization/zh-CN/browser/x.ftl": "quit = 退出浏览器\n",
            "localization/zh-CN/toolkit/y.ftl": "save = 保存 { -brand-short-name } 文件\n",
            "chrome/zh-CN/locale/zh-CN/global/z.properties": "k=找不到页面\n",
            "manifest.json": "{}"})
        roots = {"firefox-esr": os.path.join(self.tmp, "ff"), "firefox-esr-l10n-zh-cn": os.path.join(self.tmp, "l10n")}
        self.assertEqual(list(rp.read_firefox(roots)), [
            ("Quit the browser", "退出浏览器"), ("Save Firefox file", "保存 Firefox 文件"), ("Page not found", "找不到页面")])


class QmTest(unittest.TestCase):
    def test_read_qm(self):
        self.assertEqual(rp.read_qm(build_qm()), [
            ("CloseButton", "Close Tab", "", "关闭标签页"),
            ("Ctx", "%n file(s) – ok", "a note", "%n 个文件"),
            ("", "Café", "", "咖啡馆"),
        ])

    def test_bad_magic(self):
        with self.assertRaises(ValueError):
            rp.read_qm(b"\0" * 32)

    def test_unknown_tag(self):
        with self.assertRaises(ValueError):
            rp.read_qm(rp.QM_MAGIC + qm_field(0x69, b"\x63\0\0\0\0"))

    def test_reader_and_gcompris_with_stand_in_opencc(self):
        tmp = tempfile.mkdtemp()
        try:
            folder = os.path.join(tmp, "root", "usr/share/gcompris-qt/translations")
            os.makedirs(folder)
            for name in ("gcompris_zh_TW.qm", "gcompris_fr.qm"):
                with open(os.path.join(folder, name), "wb") as f:
                    f.write(build_qm())
            roots = {"gcompris-qt-data": os.path.join(tmp, "root")}
            self.assertEqual(list(rp.qm_reader("gcompris-qt-data", r"gcompris_zh_TW\.qm")(roots)), [
                ("Close Tab", "关闭标签页"), ("%n file(s) – ok", "%n 个文件"), ("Café", "咖啡馆")])
            # a stand-in opencc: checks its arguments, marks each line so the conversion shows
            bindir = os.path.join(tmp, "bin")
            os.makedirs(bindir)
            with open(os.path.join(bindir, "opencc"), "w") as f:
                f.write("#!%s\nimport sys\nassert sys.argv[1:] == ['-c', 'tw2sp.json'], sys.argv\n"
                        "data = sys.stdin.buffer.read().decode('utf-8')\n"
                        "sys.stdout.buffer.write(''.join('S' + l for l in data.splitlines(True)).encode('utf-8'))\n"
                        % sys.executable)
            os.chmod(os.path.join(bindir, "opencc"), 0o755)
            old = os.environ["PATH"]
            os.environ["PATH"] = bindir + os.pathsep + old
            try:
                self.assertEqual(rp.opencc_convert(["軟體", "a\nb"]), ["S軟體", "Sa\nb"])
                self.assertEqual(list(rp.read_gcompris(roots)), [
                    ("Close Tab", "S关闭标签页"), ("%n file(s) – ok", "S%n 个文件"), ("Café", "S咖啡馆")])
                os.environ["PATH"] = os.path.join(tmp, "empty")
                self.assertIsNone(rp.opencc_convert(["x"]))
                self.assertEqual(list(rp.read_gcompris(roots)), [])
            finally:
                os.environ["PATH"] = old
        finally:
            shutil.rmtree(tmp)


class GettextTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp()

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def test_mo_reader(self):
        root = os.path.join(self.tmp, "pkg")
        write_mo(os.path.join(root, "usr/share/locale/zh_CN/LC_MESSAGES/app.mo"), {
            "Open file": "打开文件", "menu\x04Close window": "关闭窗口", "One file\x00Many files": "多个文件\x00x",
            "Empty": ""})
        write_mo(os.path.join(root, "usr/share/locale/zh_TW/LC_MESSAGES/app.mo"), {"Open file": "開啟檔案"})
        write_mo(os.path.join(root, "usr/share/locale/zh_CN/other/app.mo"), {"Open file": "别处"})
        pairs = sorted(rp.mo_reader(["pkg"])({"pkg": root}))
        self.assertEqual(pairs, [("Close window", "关闭窗口"), ("One file", "多个文件"), ("Open file", "打开文件")])

    def test_wesnoth(self):
        root = os.path.join(self.tmp, "w")
        write_mo(os.path.join(root, "usr/share/games/wesnoth/1.16/locale/zh_CN/LC_MESSAGES/wesnoth.mo"), {
            "race^Dwarves": "矮人", "race+female^Dunefolk Human": "沙丘游民", "unit help^Attacks": "攻击手段",
            "$unit.name attacks the orcs": "$unit.name 攻击兽人", "x^2 means x squared": "x^2 表示平方"})
        pairs = sorted(rp.read_wesnoth({"wesnoth-1.16-data": root}))
        self.assertEqual(pairs, [("Attacks", "攻击手段"), ("Dunefolk Human", "沙丘游民"), ("Dwarves", "矮人"),
                                 ("x^2 means x squared", "x^2 表示平方")])

    def test_read_po(self):
        po = ('msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=UTF-8\\n"\n\n'
              '#: a.c:1\nmsgid "Jump over"\nmsgstr "跳过"\n\n'
              '#, fuzzy\nmsgid "Run away"\nmsgstr "逃跑"\n\n'
              'msgctxt "level"\nmsgid ""\n"Long "\n"line\\twith \\"quotes\\""\nmsgstr ""\n"长"\n"行\\n"\n\n'
              'msgid "One coin"\nmsgid_plural "Many coins"\nmsgstr[0] "金币"\n\n'
              'msgid "Untranslated"\nmsgstr ""\n\n'
              '#~ msgid "Old"\n#~ msgstr "旧"\n')
        self.assertEqual(rp.read_po(po), [("Jump over", "跳过"), ('Long line\twith "quotes"', "长行\n"),
                                          ("One coin", "金币")])

    def test_parse_tr(self):
        tr = ("# textdomain: boats\nBoat cruise mode on=巡航模式开启\nA@=B means equal=A@=B 表示相等\n"
              "Line@nbreak=换@n行\nOwner: @1=主人：@1\nNo translation=\n")
        self.assertEqual(rp.parse_tr(tr), [("Boat cruise mode on", "巡航模式开启"), ("A=B means equal", "A=B 表示相等"),
                                           ("Line\nbreak", "换\n行")])


class CldrTest(unittest.TestCase):
    EN = b"""<?xml version="1.0" encoding="UTF-8"?>
<ldml><identity><version number="1"/></identity>
<localeDisplayNames>
  <localeDisplayPattern><localePattern>{0} ({1})</localePattern></localeDisplayPattern>
  <territories>
    <territory type="BA">Bosnia &amp; Herzegovina</territory>
    <territory type="BA" alt="short">Bosnia</territory>
    <territory type="US">United States</territory>
    <territory type="XK">Kosovo</territory>
  </territories>
</localeDisplayNames>
<dates><calendars><calendar type="gregorian"><months><monthContext type="format"><monthWidth type="wide">
  <month type="1">January</month></monthWidth></monthContext></months></calendar></calendars></dates>
</ldml>"""
    ZH = """<?xml version="1.0" encoding="UTF-8"?>
<ldml><identity><version number="1"/></identity>
<localeDisplayNames>
  <localeDisplayPattern><localePattern>{0}（{1}）</localePattern></localeDisplayPattern>
  <territories>
    <territory type="BA">波斯尼亚和黑塞哥维那</territory>
    <territory type="BA" alt="short">波黑</territory>
    <territory type="US" draft="contributed">美国</territory>
    <territory type="XK" draft="unconfirmed">科索沃</territory>
  </territories>
</localeDisplayNames>
<dates><calendars><calendar type="gregorian"><months><monthContext type="format"><monthWidth type="wide">
  <month type="1">一月</month></monthWidth></monthContext></months></calendar></calendars></dates>
</ldml>""".encode("utf-8")

    def test_ldml(self):
        self.assertEqual(list(rp.cldr_ldml_pairs(self.EN, self.ZH)), [
            ("Bosnia & Herzegovina", "波斯尼亚和黑塞哥维那"), ("Bosnia", "波黑"), ("United States", "美国")])

    def test_annotations(self):
        en = '<ldml><annotations><annotation cp="😀">face | grin</annotation>' \
             '<annotation cp="😀" type="tts">grinning face</annotation>' \
             '<annotation cp="🐶" type="tts">dog face</annotation></annotations></ldml>'.encode("utf-8")
        zh = '<ldml><annotations><annotation cp="😀">脸 | 笑</annotation>' \
             '<annotation cp="😀" type="tts">嘿嘿</annotation></annotations></ldml>'.encode("utf-8")
        self.assertEqual(list(rp.cldr_annotation_pairs(en, zh)), [("grinning face", "嘿嘿")])


class SourcesTest(unittest.TestCase):
    def test_shape(self):
        names = [s["name"] for s in rp.PROGRAM_SOURCES]
        self.assertEqual(len(names), len(set(names)))
        for s in rp.PROGRAM_SOURCES:
            self.assertTrue(s["packages"] and callable(s["read"]), s["name"])
            self.assertTrue(s["read"].__doc__, s["name"])


if __name__ == "__main__":
    unittest.main()
