"""Tests of assets/corpus/build_parallel.py without network: the cleaning rules on hand-made catalog entries, the
split, and one whole run on a fake package (a .deb built here, handed out by a fake apt-get on PATH).

  /usr/bin/python3 -m unittest discover -s tests/corpus -p '*_test.py'     (ctest: corpus_build_parallel)
"""
import collections
import gettext
import io
import json
import os
import shutil
import stat
import struct
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "..", "assets", "corpus", "build_parallel.py")
sys.path.insert(0, os.path.dirname(SCRIPT))
sys.path.insert(0, HERE)
import build_parallel as bp  # noqa: E402
from corpus_fixtures import write_mo  # noqa: E402 (beside this file)


def clean(en, zh):
    return bp.clean_pair(en, zh)


class CleaningRules(unittest.TestCase):
    def assert_kept(self, msgid, msgstr, en, zh):
        self.assertEqual(clean(msgid, msgstr), ("ok", en, zh))

    def assert_removed(self, msgid, msgstr, rule):
        self.assertEqual(clean(msgid, msgstr)[0], rule, (msgid, msgstr))

    def test_plain_pair_is_kept(self):
        self.assert_kept("Set static hostname", "设置静态主机名", "Set static hostname", "设置静态主机名")

    def test_empty_and_header(self):
        self.assert_removed("", "Content-Type: text/plain; charset=UTF-8", "empty")
        self.assert_removed("Open the file", "", "empty")
        self.assert_removed("Open the file", "   ", "empty")

    def test_translator_credits(self):
        self.assert_removed("translator-credits", "张三 <zhang@example.org>", "credits")
        self.assert_removed("Your names", "张三", "credits")

    def test_untranslated_chinese_side(self):
        self.assert_removed("Open the file", "Open the file", "untranslated")
        self.assert_removed("Open the file", "Datei öffnen", "untranslated")

    def test_gtk_underscore_accelerators(self):
        self.assert_kept("_Open File", "打开文件(_O)", "Open File", "打开文件")
        self.assert_kept("Save _As", "另存为（_A）", "Save As", "另存为")
        self.assert_kept("Find Pre_vious", "查找上一个(_V)", "Find Previous", "查找上一个")

    def test_kde_and_libreoffice_accelerators(self):
        self.assert_kept("&Open File", "打开文件(&O)", "Open File", "打开文件")
        self.assert_kept("Insert ~Table", "插入表格(~T)", "Insert Table", "插入表格")
        self.assert_kept("Search && Replace", "查找和替换(&S)", "Search & Replace", "查找和替换")

    def test_underscore_of_an_identifier_is_not_an_accelerator(self):
        # The word also appears in the translation, so it is a name, not a marker; such pairs are then code.
        self.assert_removed("Unset LC_ALL first", "请先取消设置 LC_ALL", "code")
        self.assertEqual(bp.strip_accelerators("Unset LC_ALL first", "请先取消设置 LC_ALL"),
                         ("Unset LC_ALL first", "请先取消设置 LC_ALL"))

    def test_context_and_plural_keys(self):
        catalog = {"menu\x04Open the file": "打开文件", ("One file selected", 0): "选择了文件",
                   ("One file selected", 1): "not used"}
        self.assertEqual(sorted(bp.catalog_entries(catalog)),
                         [("One file selected", "选择了文件"), ("Open the file", "打开文件")])

    def test_trailing_colon_and_ellipsis_normalised_on_both_sides(self):
        self.assert_kept("Save the file...", "保存文件…", "Save the file", "保存文件")
        self.assert_kept("File name:", "文件名：", "File name", "文件名")
        self.assert_kept("Open Recent…", "最近打开……", "Open Recent", "最近打开")
        self.assert_kept("Export As:", "导出为", "Export As", "导出为")  # one side only: still agreed after

    def test_placeholders_drop_the_pair(self):
        for msgid, msgstr in [("Cannot open %s", "无法打开 %s"), ("Copied %d files", "已复制 %d 个文件"),
                              ("Move %1$s to %2$s", "将 %1$s 移动到 %2$s"), ("Delete {0} items", "删除 {0} 项"),
                              ("Path is ${x} now", "路径现在是 ${x}"), ("Replace %1 by %2", "用 %2 替换 %1"),
                              ("invalid type %qs here", "此处类型 %qs 无效"), ("Move ~a onto the ten", "将 ~a 移到 10 上"),
                              ("Progress is %(done)s now", "进度为 %(done)s")]:
            self.assert_removed(msgid, msgstr, "placeholder")

    def test_percent_sign_in_text_is_not_a_placeholder(self):
        self.assert_kept("Increase by 10% now", "现在增加 10%", "Increase by 10% now", "现在增加 10%")
        self.assert_kept("100% of the width", "宽度的 100%", "100% of the width", "宽度的 100%")

    def test_productname_becomes_libreoffice(self):
        self.assert_kept("%PRODUCTNAME could not open the document", "%PRODUCTNAME 无法打开该文档",
                         "LibreOffice could not open the document", "LibreOffice 无法打开该文档")

    def test_simple_markup_is_stripped_other_markup_drops(self):
        self.assert_kept("<b>Warning</b> the disk is full", "<b>警告</b>磁盘已满", "Warning the disk is full",
                         "警告磁盘已满")
        self.assert_kept("Tom &amp; Jerry show", "猫和老鼠节目", "Tom & Jerry show", "猫和老鼠节目")
        self.assert_removed("Use the <object> element here", "在此使用 <object> 元素", "markup")
        self.assert_removed("<b>Warning</b> the disk is full", "警告磁盘已满", "markup")

    def test_code_like_english(self):
        self.assert_removed("See https://example.org for help", "参见 https://example.org", "code")
        self.assert_removed("Use --force to overwrite", "使用 --force 覆盖", "code")
        self.assert_removed("Read /etc/fstab again", "重新读取 /etc/fstab", "code")
        self.assert_removed("call new_effect twice", "调用 new_effect 两次", "code")
        self.assert_removed("Text files (*.txt)", "文本文件 (*.txt)", "code")

    def test_whitespace_collapsed(self):
        self.assert_kept("Open the\nfile\tnow", "现在\n打开文件", "Open the file now", "现在 打开文件")

    def test_length_limits(self):
        self.assert_removed("Open", "打开", "length")
        self.assert_removed("Open 3", "打开 3", "length")  # two words but one with letters
        self.assert_removed(" ".join(["word"] * 41), "词" * 60, "length")
        self.assert_kept(" ".join(["word"] * 40), "词" * 60, " ".join(["word"] * 40), "词" * 60)
        self.assert_removed("Open the " + "long " * 30 + "file", "打" * 161, "length")

    def test_ratio_limits(self):
        self.assert_removed("Choose export format", "格", "ratio")
        self.assert_removed("Arch A", "美国建筑图纸 Arch A", "ratio")

    def test_mostly_latin_translation(self):
        self.assert_removed("Rotate and shear the layer", "Rotate and Shear 旋转", "latin")


class DedupAndSplit(unittest.TestCase):
    def test_english_key_ignores_case_space_and_final_stop(self):
        self.assertEqual(bp.english_key("Open  the File."), bp.english_key("open the file"))

    def test_most_frequent_translation_wins_then_package_order(self):
        removed = collections.Counter()
        pairs = [(0, "Open the file", "打开文件"), (1, "Open the file", "打开该文件"), (2, "open the file", "打开该文件"),
                 (0, "Close the file", "关闭文件"), (1, "Close the file", "关掉文件")]
        out = bp.deduplicate(pairs, removed)
        self.assertEqual(out["open the file"], ("Open the file", "打开该文件", 1))
        self.assertEqual(out["close the file"], ("Close the file", "关闭文件", 0))
        self.assertEqual(removed["duplicate"], 3)

    def test_split_is_a_function_of_the_english_key(self):
        keys = ["sentence number %d" % i for i in range(20000)]
        splits = collections.Counter(bp.split_of(k) for k in keys)
        self.assertEqual(bp.split_of("open the file"), bp.split_of("open the file"))
        # 2% + 2% held out: binomial with n = 20000 stays well inside these bounds
        self.assertTrue(300 < splits["valid"] < 500, splits)
        self.assertTrue(300 < splits["test"] < 500, splits)


FAKE_APT = """#!/bin/sh
# fake apt-get: "download fakepkg" copies the test's .deb; no network: every other package fails like apt does
if [ "$1" = download ] && [ "$2" = fakepkg ]; then cp "%s" .; exit 0; fi
echo "E: Failed to fetch http://deb.debian.org/debian/pool/main/x/$2.deb  Temporary failure resolving 'deb.debian.org'" >&2
echo "E: Unable to fetch some archives" >&2
exit 100
"""


class WholeRunOffline(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="ts_parallel_test_")
        root = os.path.join(self.tmp, "pkg")
        mo_dir = os.path.join(root, "usr", "share", "locale", "zh_CN", "LC_MESSAGES")
        lo_dir = os.path.join(root, "usr", "lib", "libreoffice", "program", "resource", "zh_CN", "LC_MESSAGES")
        tw_dir = os.path.join(root, "usr", "share", "locale", "zh_TW", "LC_MESSAGES")
        for d in (mo_dir, lo_dir, tw_dir, os.path.join(root, "DEBIAN")):
            os.makedirs(d)
        with open(os.path.join(root, "DEBIAN", "control"), "w") as f:
            f.write("Package: fakepkg\nVersion: 1.0-1\nArchitecture: all\nMaintainer: t <t@example.org>\n"
                    "Description: test catalogs\n")
        with open(os.path.join(mo_dir, "app.mo"), "wb") as f:
            f.write(write_mo({"_Open the file": "打开文件(_O)", "Cannot open %s": "无法打开 %s",
                              "menu\x04Close the window": "关闭窗口",
                              "One file selected\x00Many files selected": "选择了文件",
                              "Untranslated message here": "Untranslated message here"}))
        with open(os.path.join(lo_dir, "sw.mo"), "wb") as f:
            f.write(write_mo({"STR_OPEN\x04Open the file": "打开文件", "Insert ~Table here": "在此插入表格"}))
        with open(os.path.join(tw_dir, "app.mo"), "wb") as f:
            f.write(write_mo({"Open the file now": "現在開啟檔案"}))
        self.deb = os.path.join(self.tmp, "fakepkg_1.0-1_all.deb")
        subprocess.run(["dpkg-deb", "--root-owner-group", "-b", root, self.deb], check=True,
                       stdout=subprocess.DEVNULL)
        self.bin = os.path.join(self.tmp, "bin")
        os.makedirs(self.bin)
        apt = os.path.join(self.bin, "apt-get")
        with open(apt, "w") as f:
            f.write(FAKE_APT % self.deb)
        os.chmod(apt, os.stat(apt).st_mode | stat.S_IEXEC)

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def run_script(self, *args, path=None):
        env = dict(os.environ, PATH=path if path is not None else self.bin + os.pathsep + os.environ["PATH"])
        return subprocess.run([sys.executable, SCRIPT] + list(args), env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)

    def test_reads_catalogs_and_writes_splits(self):
        out = os.path.join(self.tmp, "out")
        r = self.run_script("--out", out, "--packages", "fakepkg")
        self.assertEqual(r.returncode, 0, r.stderr)
        rows = []
        for split in ("train", "valid", "test"):
            with open(os.path.join(out, split + ".tsv"), encoding="utf-8") as f:
                rows += [tuple(line.rstrip("\n").split("\t")) for line in f]
        self.assertEqual(sorted(rows), [("Close the window", "关闭窗口"), ("Insert Table here", "在此插入表格"),
                                        ("One file selected", "选择了文件"), ("Open the file", "打开文件")])
        with open(os.path.join(out, "stats.json"), encoding="utf-8") as f:
            stats = json.load(f)
        self.assertEqual(stats["pairs_total"], 4)
        self.assertEqual(stats["versions"], {"fakepkg": "1.0-1"})
        self.assertEqual(stats["removed"], {"duplicate": 1, "placeholder": 1, "untranslated": 1, "empty": 2})
        self.assertEqual(stats["catalogs"], {"fakepkg": 2})  # zh_TW is not read

    def test_package_that_fails_to_download_names_itself(self):
        r = self.run_script("--out", os.path.join(self.tmp, "out"), "--packages", "fakepkg", "no-such-pkg")
        self.assertEqual(r.returncode, 1)
        lines = r.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, r.stderr)
        self.assertIn("package no-such-pkg failed to download", lines[0])
        self.assertIn("Temporary failure resolving", lines[0])

    def test_missing_apt_get_is_one_line(self):
        empty = os.path.join(self.tmp, "empty")
        os.makedirs(empty)
        r = self.run_script("--out", os.path.join(self.tmp, "out"), path=empty)
        self.assertEqual(r.returncode, 1)
        self.assertEqual(r.stderr.strip(), "build_parallel: apt-get not found: Debian's package tools are needed "
                                           "to fetch the catalogs")


if __name__ == "__main__":
    unittest.main()
