"""Tests of assets/corpus/read_manuals.py on tiny hand-made manual pages written into a temporary folder (no
network, no packages): which pairs each reader aligns, and that untranslated, misaligned, code and navigation
text is dropped.

  /usr/bin/python3 -m unittest discover -s tests/corpus -p '*_test.py'
"""
import os
import shutil
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "assets", "corpus"))
import read_manuals as rm  # noqa: E402


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


LO_PAGE = """<!DOCTYPE html>
<html lang="{lang}"><head><title>{title}</title></head>
<body>
<header id="TopLeftHeader"><p>LibreOffice 7.4 Help</p></header>
<div id="DisplayArea">
<h1 id="hd_id1" dir="auto">{h1}</h1>
<p id="par_id2" class="paragraph"><span class="avis">{p2}</span></p>
<p id="par_id3" class="paragraph">{p3}</p>
<p id="par_id4" class="paragraph">{p4}</p>
<p id="par_id5" class="paragraph"><img src="media/x.svg" alt="Icon"> {p5}</p>
<pre id="par_id6" class="bascode">Print 1</pre>
</div>
</body></html>
"""

SWITCH = ('<span id="sw1" class="switchinline"><span hidden="true" id="MACtext1" class="MAC">'
          '<span class="keycode">Command</span></span><span hidden="true" id="defaulttext1">'
          '<span class="keycode">Ctrl</span></span></span><span class="keycode">+N</span>')


class LibreOfficeHelpTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="read_manuals_lo_")
        self.addCleanup(shutil.rmtree, self.tmp)
        en = os.path.join(self.tmp, "en", "usr/share/libreoffice/help/en-US/text/shared/01/01010000.html")
        zh = os.path.join(self.tmp, "zh", "usr/share/libreoffice/help/zh-CN/text/shared/01/01010000.html")
        write(en, LO_PAGE.format(lang="en-US", title="New", h1="New Document",
                                 p2="Creates a new document. You can <emph>choose</emph> a template.",
                                 p3="Choose File - New.", p4="Press %s to open a document." % SWITCH,
                                 p5="Click the icon."))
        write(zh, LO_PAGE.format(lang="zh-CN", title="新建", h1="新建文档",
                                 p2="创建新文档。您可以<emph>选择</emph>一个模板。",
                                 p3="Choose File - New.", p4="按 %s 打开文档。" % SWITCH, p5="点击图标。"))
        # a page with no Chinese counterpart is ignored
        write(os.path.join(self.tmp, "en", "usr/share/libreoffice/help/en-US/text/shared/01/only_en.html"),
              LO_PAGE.format(lang="en-US", title="x", h1="Only English", p2="a b", p3="c d", p4="e f", p5="g h"))
        self.roots = {"libreoffice-help-en-us": os.path.join(self.tmp, "en"),
                      "libreoffice-help-zh-cn": os.path.join(self.tmp, "zh")}

    def test_pairs_by_id(self):
        self.assertEqual(list(rm.read_libreoffice_help(self.roots)), [
            ("New Document", "新建文档"),
            # split into sentences: both sides have two
            ("Creates a new document.", "创建新文档。"),
            ("You can choose a template.", "您可以选择一个模板。"),
            # par_id3 is untranslated (no CJK): dropped; switchinline keeps its default case
            ("Press Ctrl+N to open a document.", "按 Ctrl+N 打开文档。"),
            # par_id5 holds an image and par_id6 is code: dropped
        ])

    def test_switchinline_without_default_is_dropped(self):
        no_default = SWITCH.replace('id="defaulttext1"', 'id="WRITERtext1"')
        self.assertIsNone(rm.lo_paragraphs(
            '<div id="DisplayArea"><p id="par_1">Press %s now.</p></div>' % no_default)[("par_1", 0)])

    def test_repeated_id_matched_by_occurrence(self):
        page = '<div id="DisplayArea"><p id="par_1">%s</p><div class="embedded"><p id="par_1">%s</p></div></div>'
        self.assertEqual(rm.lo_paragraphs(page % ("First one", "Second one")),
                         {("par_1", 0): "First one", ("par_1", 1): "Second one"})


DOCBOOK = """<?xml version="1.0" encoding="UTF-8" standalone="no"?>
<html xmlns="http://www.w3.org/1999/xhtml"><head><title>{title}</title></head>
<body>
<div class="navheader"><table><tr><td><a href="ch00.html">{prev}</a></td></tr></table></div>
<div class="chapter">
  <div class="titlepage"><div><div><h1 class="title"><a id="_ch"/>{chapter}</h1></div></div></div>
  <div class="toc"><p><b>{toc}</b></p><dl class="toc"><dt><span class="section"><a href="#_a">{sec1}</a></span></dt></dl></div>
  <div class="section">
    <div class="titlepage"><div><div><h2 class="title"><a id="_a"/>{sec1}</h2></div></div></div>
    <p>{p1}<a href="#ftn.1" class="footnote"><sup class="footnote">[1]</sup></a></p>
    <pre class="screen">$ sudo apt-get update</pre>
    <p>{p2}</p>
    <p><code class="literal">apt-get install foo</code> {p3}</p>
    <div class="itemizedlist"><ul class="itemizedlist">
      <li class="listitem"><p>{li1}</p></li>
      <li class="listitem"><p>{li2}</p></li>
    </ul></div>
    <div class="table"><p class="title"><b>{tabtitle}</b></p><div class="table-contents"><table>
      <tr><td><code>-v</code></td><td>{cell}</td></tr></table></div></div>
  </div>
  <div class="section">
    <div class="titlepage"><div><div><h2 class="title"><a id="_b"/>{sec2}</h2></div></div></div>
    {sec2_body}
  </div>
  <div class="footnotes"><div class="footnote"><p><sup>[<a href="#1">1</a>] </sup>{fn}</p></div></div>
</div>
<div class="navfooter"><table><tr><td><a href="ch02.html">{next}</a></td></tr></table></div>
</body></html>
"""

EN_DOC = dict(
    title="Chapter 1. Tutorials", prev="Prev", next="Next", chapter="Chapter 1. Package tutorials",
    toc="Table of Contents", sec1="1.1. Getting started with APT", sec2="1.2. Advanced use",
    p1="Use apt to install packages. It resolves dependencies for you.",
    p2="This paragraph was not translated yet.",
    p3="installs it.",
    li1="The aptitude tool is an alternative.",
    li2="Run it as root with sudo.",
    tabtitle="Table 1.1. Options", cell="Be verbose.",
    sec2_body="<p>First paragraph of the advanced part.</p><p>Second paragraph of the advanced part.</p>",
    fn="See the apt manual page for more.")
ZH_DOC = dict(
    title="第 1 章 教程", prev="上一页", next="下一页", chapter="第 1 章 软件包教程",
    toc="目录", sec1="1.1. APT 入门", sec2="1.2. 高级用法",
    p1="使用 apt 安装软件包。它会为您解决依赖关系。",
    p2="This paragraph was not translated yet.",
    p3="安装它。",
    li1="aptitude 工具是另一种选择。",
    # misaligned (a different sentence): rsync does not occur in the English
    li2="用 rsync 同步文件。",
    tabtitle="表 1.1. 选项", cell="详细输出。",
    # one paragraph where the English has two: the section does not align
    sec2_body="<p>高级部分的段落。</p>",
    fn="更多信息请参阅 apt 手册页。")


class DocBookTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="read_manuals_db_")
        self.addCleanup(shutil.rmtree, self.tmp)
        write(os.path.join(self.tmp, "en", "usr/share/debian-reference/ch01.en.html"), DOCBOOK.format(**EN_DOC))
        write(os.path.join(self.tmp, "zh", "usr/share/debian-reference/ch01.zh-cn.html"), DOCBOOK.format(**ZH_DOC))
        self.roots = {"debian-reference-en": os.path.join(self.tmp, "en"),
                      "debian-reference-zh-cn": os.path.join(self.tmp, "zh")}

    def test_aligned_pairs(self):
        self.assertEqual(list(rm.read_debian_reference(self.roots)), [
            # chapter title: numbering removed; the toc and the navigation are skipped
            ("Package tutorials", "软件包教程"),
            ("Getting started with APT", "APT 入门"),
            # split into two sentence pairs; the footnote mark is gone
            ("Use apt to install packages.", "使用 apt 安装软件包。"),
            ("It resolves dependencies for you.", "它会为您解决依赖关系。"),
            # <pre class="screen"> skipped, the untranslated paragraph dropped, the command line (mostly code)
            # dropped; the second list item is misaligned (rsync) and dropped; the table is skipped
            ("The aptitude tool is an alternative.", "aptitude 工具是另一种选择。"),
            # section 1.2 has 2 paragraphs in English and 1 in Chinese: only its heading's section is skipped as
            # a whole; the footnote (its own section) aligns, without its number
            ("See the apt manual page for more.", "更多信息请参阅 apt 手册页。"),
        ])

    def test_section_with_mostly_latin_mismatches_is_skipped(self):
        en = [rm.Unit("p", "Use apt here.", 1), rm.Unit("p", "Use dpkg there.", 1)]
        zh_ok = [rm.Unit("p", "这里用 apt。", 1), rm.Unit("p", "那里用 dpkg。", 1)]
        zh_bad = [rm.Unit("p", "这里用 rsync。", 1), rm.Unit("p", "那里用 dpkg。", 1)]
        self.assertEqual(list(rm.align_sections(en, zh_ok)),
                         [("Use apt here.", "这里用 apt。"), ("Use dpkg there.", "那里用 dpkg。")])
        self.assertEqual(list(rm.align_sections(en, zh_bad)), [])

    def test_different_section_count_aligns_nothing(self):
        en = [rm.Unit("p", "One thing.", 1), rm.Unit("p", "Other thing.", 2)]
        zh = [rm.Unit("p", "一件事。", 1)]
        self.assertEqual(list(rm.align_sections(en, zh)), [])


class SentenceTest(unittest.TestCase):
    def test_split_en(self):
        self.assertEqual(rm.split_en("Use tools, e.g. Apt and dpkg. They work! Why? Because."),
                         ["Use tools, e.g. Apt and dpkg.", "They work!", "Why?", "Because."])
        self.assertEqual(rm.split_en("Version 1.2 is out. see below"), ["Version 1.2 is out. see below"])

    def test_split_zh(self):
        self.assertEqual(rm.split_zh("第一句。第二句！“第三句？”最后"), ["第一句。", "第二句！", "“第三句？”", "最后"])

    def test_split_pair(self):
        # unequal sentence counts: the whole paragraph when it is short
        self.assertEqual(rm.split_pair("One. Two.", "一和二。"), [("One. Two.", "一和二。")])
        long_en = " ".join(["word"] * 41) + ". Another sentence here."
        self.assertEqual(rm.split_pair(long_en, "很长的一句话。"), [])
        self.assertFalse(rm.latin_words_match("Use the tool.", "使用 GIMP 工具。"))
        self.assertTrue(rm.latin_words_match("Use gimp.", "使用 GIMP。"))


MALLARD_EN = """<?xml version="1.0" encoding="utf-8"?>
<page xmlns="http://projectmallard.org/1.0/" type="topic" id="keys">
  <info><desc>Keyboard shortcuts.</desc><credit type="author"><name>A. Author</name></credit></info>
  <title>Useful keyboard shortcuts</title>
  <p>Press <keyseq><key>Ctrl</key><key>Alt</key><key>T</key></keyseq> to open a terminal.</p>
  <p>Open <guiseq><gui>Settings</gui><gui>Keyboard</gui></guiseq> to change them.</p>
  <p>See <link xref="other-page"/> for more.</p>
  <section id="more">
    <title>More shortcuts</title>
    <code>gsettings list-keys org.gnome.desktop.wm.keybindings</code>
    <p>These work in every application.</p>
  </section>
</page>
"""
MALLARD_ZH = """<?xml version="1.0" encoding="utf-8"?>
<page xmlns="http://projectmallard.org/1.0/" type="topic" id="keys" xml:lang="zh-CN">
  <info><desc>键盘快捷键。</desc><credit type="author"><name>A. Author</name></credit></info>
  <title>实用的键盘快捷键</title>
  <p>按 <keyseq><key>Ctrl</key><key>Alt</key><key>T</key></keyseq> 打开终端。</p>
  <p>打开 <guiseq><gui>设置</gui><gui>键盘</gui></guiseq> 来更改它们。</p>
  <p>更多信息请参见 <link xref="other-page"/>。</p>
  <section id="more">
    <title>更多快捷键</title>
    <code>gsettings list-keys org.gnome.desktop.wm.keybindings</code>
    <p>These work in every application.</p>
  </section>
</page>
"""


class GnomeHelpTest(unittest.TestCase):
    def test_mallard(self):
        tmp = tempfile.mkdtemp(prefix="read_manuals_gh_")
        self.addCleanup(shutil.rmtree, tmp)
        write(os.path.join(tmp, "usr/share/help/C/gnome-help/keys.page"), MALLARD_EN)
        write(os.path.join(tmp, "usr/share/help/zh_CN/gnome-help/keys.page"), MALLARD_ZH)
        self.assertEqual(list(rm.read_gnome_help({"gnome-user-docs": tmp})), [
            ("Useful keyboard shortcuts", "实用的键盘快捷键"),
            ("Press Ctrl+Alt+T to open a terminal.", "按 Ctrl+Alt+T 打开终端。"),
            ("Open Settings \u25b8 Keyboard to change them.", "打开 设置 \u25b8 键盘 来更改它们。"),
            # the empty <link xref/> paragraph is dropped, so is the block <code> and the untranslated paragraph
            ("More shortcuts", "更多快捷键"),
        ])


TRANSLATION_EN = """Package: foo
Description-md5: 11111111111111111111111111111111
Description-en: file synchronisation tool
 Foo copies files between hosts.
 It is fast.
 .
 Features:
  - delta transfers
  - compression

Package: bar
Description-md5: 22222222222222222222222222222222
Description-en: bar game
 Bar is a game.

Package: baz
Description-md5: 33333333333333333333333333333333
Description-en: baz library
 Baz does things.
"""
TRANSLATION_ZH = """Package: foo
Description-md5: 11111111111111111111111111111111
Description-zh_CN: 文件同步工具
 Foo 在主机之间复制文
 件。它很快。
 .
 功能：
  - 增量传输
  - 压缩

Package: bar
Description-md5: 99999999999999999999999999999999
Description-zh_CN: 吧游戏
 吧是一个游戏。

Package: baz
Description-md5: 33333333333333333333333333333333
Description-zh_CN: baz library
 Baz 做事情。
"""


class DdtpTest(unittest.TestCase):
    def test_ddtp(self):
        tmp = tempfile.mkdtemp(prefix="read_manuals_ddtp_")
        self.addCleanup(shutil.rmtree, tmp)
        write(os.path.join(tmp, "Translation-en"), TRANSLATION_EN)
        write(os.path.join(tmp, "Translation-zh_CN"), TRANSLATION_ZH)
        self.assertEqual(sorted(rm.read_ddtp({"ddtp": tmp})), sorted([
            ("Baz does things.", "Baz 做事情。"),  # the untranslated short description is dropped
            ("file synchronisation tool", "文件同步工具"),
            # wrapped Chinese joined without a space, then split into sentences
            ("Foo copies files between hosts.", "Foo 在主机之间复制文件。"),
            ("It is fast.", "它很快。"),
            # the list paragraph is dropped; bar's translation is of another English (md5): not aligned
        ]))


class SourcesTest(unittest.TestCase):
    def test_manual_sources(self):
        names = [s["name"] for s in rm.MANUAL_SOURCES]
        self.assertEqual(names[0], "libreoffice-help")
        self.assertEqual(len(names), len(set(names)))
        for s in rm.MANUAL_SOURCES:
            self.assertTrue(callable(s["read"]))
            self.assertTrue(s["packages"] or callable(s.get("fetch")))


if __name__ == "__main__":
    unittest.main()
