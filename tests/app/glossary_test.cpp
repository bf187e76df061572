// One term per concept in Chinese (#35): po/glossary.tsv lists the term the interface and the lessons use for each
// concept and the variants to avoid; no lesson's Chinese text and no msgstr of po/zh_CN.po may use an avoided
// variant, and lesson Chinese names knobs and tabs through {ui:…} placeholders, never by their English names.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

const fs::path kSource = fs::path(TS_SOURCE_DIR);

std::string read_file(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

struct Term {
    std::string en, zh;
    std::vector<std::string> avoid;
};

std::vector<Term> glossary() {
    std::vector<Term> out;
    std::istringstream in(read_file(kSource / "po" / "glossary.tsv"));
    std::string line;
    while (std::getline(in, line)) {
        if (line.empty() || line[0] == '#') continue;
        std::vector<std::string> cols;
        std::string col;
        std::istringstream ls(line);
        while (std::getline(ls, col, '\t')) cols.push_back(col);
        if (cols.size() < 2) {
            ADD_FAILURE() << "po/glossary.tsv: a line without a Chinese term: " << line;
            continue;
        }
        Term t{cols[0], cols[1], {}};
        if (cols.size() > 2) {
            std::istringstream vs(cols[2]);
            std::string v;
            while (std::getline(vs, v, '|'))
                if (!v.empty()) t.avoid.push_back(v);
        }
        out.push_back(std::move(t));
    }
    return out;
}

/// Every "zh" string of a lesson file, with where it is.
void collect_zh(const nlohmann::json& j, const std::string& path, std::vector<std::pair<std::string, std::string>>& out) {
    if (j.is_object()) {
        for (auto it = j.begin(); it != j.end(); ++it) {
            if (it.key() == "zh" && it->is_string()) out.emplace_back(path + ".zh", it->get<std::string>());
            else collect_zh(*it, path + "." + it.key(), out);
        }
    } else if (j.is_array()) {
        for (size_t i = 0; i < j.size(); ++i) collect_zh(j[i], path + "[" + std::to_string(i) + "]", out);
    }
}

std::vector<std::pair<std::string, std::string>> lesson_zh_texts() {
    std::vector<std::pair<std::string, std::string>> out;
    for (const auto& e : fs::directory_iterator(kSource / "assets" / "lessons"))
        if (e.path().extension() == ".json")
            collect_zh(nlohmann::json::parse(read_file(e.path())), e.path().filename().string(), out);
    return out;
}

/// The msgstr texts of a .po file (continuation lines joined), with their line numbers.
std::vector<std::pair<std::string, std::string>> po_msgstrs(const fs::path& po) {
    std::vector<std::pair<std::string, std::string>> out;
    std::istringstream in(read_file(po));
    std::string line;
    int n = 0;
    bool in_msgstr = false;
    while (std::getline(in, line)) {
        ++n;
        if (line.rfind("msgstr ", 0) == 0) {
            out.emplace_back("zh_CN.po:" + std::to_string(n), line.substr(7));
            in_msgstr = true;
        } else if (in_msgstr && !line.empty() && line[0] == '"') {
            out.back().second += line;
        } else {
            in_msgstr = false;
        }
    }
    return out;
}

std::string without_placeholders(std::string s) {
    for (size_t at = s.find("{ui:"); at != std::string::npos; at = s.find("{ui:")) {
        const size_t close = s.find('}', at);
        s.erase(at, close == std::string::npos ? std::string::npos : close - at + 1);
    }
    return s;
}

/// True when `word` occurs in `s` as a whole ASCII word (letters, digits and _ are word characters).
bool has_word(const std::string& s, const std::string& word) {
    auto is_word = [](unsigned char c) { return std::isalnum(c) || c == '_'; };
    for (size_t at = s.find(word); at != std::string::npos; at = s.find(word, at + 1)) {
        const bool left = at == 0 || !is_word((unsigned char)s[at - 1]);
        const bool right = at + word.size() >= s.size() || !is_word((unsigned char)s[at + word.size()]);
        if (left && right) return true;
    }
    return false;
}

}  // namespace

TEST(Glossary, NoAvoidedVariantInTheLessonsOrTheCatalogue) {
    const std::vector<Term> terms = glossary();
    ASSERT_GE(terms.size(), 15u);
    auto texts = lesson_zh_texts();
    const size_t n_lesson = texts.size();
    for (auto& m : po_msgstrs(kSource / "po" / "zh_CN.po")) texts.push_back(std::move(m));
    ASSERT_GT(n_lesson, 150u);
    ASSERT_GT(texts.size(), n_lesson + 500);
    for (const Term& t : terms)
        for (const std::string& v : t.avoid)
            for (const auto& [where, text] : texts)
                EXPECT_EQ(text.find(v), std::string::npos)
                    << where << ": uses \"" << v << "\" for " << t.en << "; the glossary's term is " << t.zh << ": " << text;
}

TEST(Glossary, LessonChineseNamesKnobsAndTabsByTheirInterfaceLabels) {
    // The English names a Chinese sentence must not carry: the knobs, and the tabs when named as tabs ("Model 标签页";
    // "Softmax" the function and "IBM Model 1" stay). Placeholders show the interface's Chinese instead.
    const std::vector<std::string> knobs = {"head", "layer", "query", "context"};
    const std::vector<std::string> tabs = {"Tokens", "Attention", "Softmax", "Activations", "Normalization", "Positions",
                                           "Predictions", "Residual", "Model", "Training", "Causal", "Lessons"};
    int checked = 0;
    for (const auto& [where, text] : lesson_zh_texts()) {
        const std::string plain = without_placeholders(text);
        ++checked;
        for (const std::string& w : knobs)
            EXPECT_FALSE(has_word(plain, w)) << where << ": \"" << w << "\" in Chinese text; write {ui:" << w << "}: " << text;
        for (const std::string& t : tabs)
            for (const char* after : {"标签页", " 标签页", "面板", " 面板"})
                EXPECT_EQ(plain.find(t + after), std::string::npos)
                    << where << ": the " << t << " tab named in English; write {ui:" << t << "}: " << text;
    }
    EXPECT_GT(checked, 150);
}

TEST(Glossary, TheWordMatcherFindsWholeWordsOnly) {
    EXPECT_TRUE(has_word("把 head 调到 2", "head"));
    EXPECT_TRUE(has_word("head", "head"));
    EXPECT_FALSE(has_word("n_heads 是头数", "head"));
    EXPECT_FALSE(has_word("d_head = 64", "head"));
    EXPECT_FALSE(has_word("ahead", "head"));
    EXPECT_TRUE(has_word("把 layer 调到", "layer"));
    EXPECT_EQ(without_placeholders("把{ui:head}调到 2"), "把调到 2");
}
