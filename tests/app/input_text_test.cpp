// The window's input helpers: the per-frame input queue (no click or keystroke lost in a slow frame) and the soft
// wrapping of the text box (the whole sentence stays visible).
#include "app/ui/input_queue.h"
#include "app/ui/soft_wrap.h"

#include <gtest/gtest.h>

namespace ts::ui {
namespace {

InputEvent key(int code, bool down) { return {InputEvent::Kind::Key, code, down, 0, 0}; }
InputEvent mouse(int button, bool down, double x = 0, double y = 0) {
    return {InputEvent::Kind::MouseButton, button, down, x, y};
}

TEST(InputQueue, PressAndReleaseInOneFrameLandInTwoFrames) {
    InputQueue q;
    q.push(mouse(0, true, 10, 20));
    q.push(mouse(0, false, 10, 20));
    const auto f1 = q.take_frame();
    ASSERT_EQ(f1.size(), 1u);
    EXPECT_TRUE(f1[0].down);
    EXPECT_DOUBLE_EQ(f1[0].x, 10);
    EXPECT_FALSE(q.empty());
    const auto f2 = q.take_frame();
    ASSERT_EQ(f2.size(), 1u);
    EXPECT_FALSE(f2[0].down);
    EXPECT_TRUE(q.empty());
}

TEST(InputQueue, DifferentKeysShareAFrameButKeepTheirOrder) {
    InputQueue q;
    q.push(key(65, true));
    q.push(key(66, true));
    q.push(key(65, false));  // second transition of key 65: waits, and so does everything after it
    q.push(key(66, false));
    const auto f1 = q.take_frame();
    ASSERT_EQ(f1.size(), 2u);
    EXPECT_EQ(f1[0].code, 65);
    EXPECT_EQ(f1[1].code, 66);
    const auto f2 = q.take_frame();
    ASSERT_EQ(f2.size(), 2u);
    EXPECT_FALSE(f2[0].down);
    EXPECT_FALSE(f2[1].down);
    EXPECT_TRUE(q.take_frame().empty());
}

TEST(InputQueue, ADoubleClickInOneFrameTakesFourFrames) {
    InputQueue q;
    for (int i = 0; i < 2; ++i) {
        q.push(mouse(0, true));
        q.push(mouse(0, false));
    }
    int frames = 0;
    std::vector<bool> downs;
    while (!q.empty()) {
        for (const auto& e : q.take_frame()) downs.push_back(e.down);
        ++frames;
    }
    EXPECT_EQ(frames, 4);
    EXPECT_EQ(downs, (std::vector<bool>{true, false, true, false}));
}

TEST(InputQueue, BackspaceThenACharacterStayInOrder) {
    constexpr int kBackspace = 259, kB = 66;
    InputQueue q;
    q.push(key(kBackspace, true));
    q.push(key(kBackspace, false));
    q.push(key(kB, true));
    q.push({InputEvent::Kind::Char, 'b', true, 0, 0});
    q.push(key(kB, false));
    std::vector<std::vector<InputEvent>> frames;
    while (!q.empty()) frames.push_back(q.take_frame());
    ASSERT_EQ(frames.size(), 3u);
    EXPECT_EQ(frames[0].size(), 1u);  // Backspace down alone: its release is the second transition of that key
    ASSERT_EQ(frames[1].size(), 2u);  // Backspace up, B down; 'b' waits (a key was pressed in this frame)
    EXPECT_EQ(frames[1][1].code, kB);
    ASSERT_EQ(frames[2].size(), 2u);
    EXPECT_EQ(frames[2][0].kind, InputEvent::Kind::Char);
}

// A breaker that fits `width` bytes per visual line, breaking after the last space that fits (else mid-word).
LineBreaker fixed_width(size_t width) {
    return [width](std::string_view line, size_t begin) {
        if (line.size() - begin <= width) return line.size();
        const size_t end = begin + width;
        const size_t sp = line.rfind(' ', end - 1);
        return sp != std::string_view::npos && sp >= begin && sp + 1 > begin ? sp + 1 : end;
    };
}

TEST(SoftWrap, WrapsAtSpacesAndKeepsHardBreaks) {
    const Wrapped w = soft_wrap("the cat sat on the mat\nok", fixed_width(8));
    EXPECT_EQ(w.display, "the cat \nsat on \nthe mat\nok");
    EXPECT_EQ(w.soft, (std::vector<size_t>{8, 16}));
    std::string real = soft_unwrap(w, w.display);
    EXPECT_EQ(real, "the cat sat on the mat\nok");
}

TEST(SoftWrap, LongWordsBreakWithinTheWordOnCharacterBoundaries) {
    // 注意力 is 9 bytes; a 4-byte width would split a character: the breaker's offset is rounded up by progress
    // rules only when it makes none, so check the pieces rejoin exactly.
    const std::string text = "abcdefghij";
    const Wrapped w = soft_wrap(text, fixed_width(4));
    EXPECT_EQ(w.display, "abcd\nefgh\nij");
    EXPECT_EQ(soft_unwrap(w, w.display), text);
    const Wrapped z = soft_wrap("注意力", [](std::string_view, size_t b) { return b; });  // no progress at all
    EXPECT_EQ(z.display, "注\n意\n力");
}

TEST(SoftWrap, TypingAtTheEndRewrapsAndTheCursorFollows) {
    const Wrapped w = soft_wrap("the cat sat", fixed_width(8));
    ASSERT_EQ(w.display, "the cat \nsat");
    std::string edited = w.display + " on the mat";
    size_t cursor = edited.size();
    const std::string real = soft_unwrap(w, edited, {&cursor});
    EXPECT_EQ(real, "the cat sat on the mat");
    EXPECT_EQ(cursor, real.size());
    const Wrapped w2 = soft_wrap(real, fixed_width(8));
    EXPECT_EQ(w2.display, "the cat \nsat on \nthe mat");
    EXPECT_EQ(real_to_soft(w2.soft, cursor), w2.display.size());
}

TEST(SoftWrap, InsertingInTheMiddleKeepsOtherSoftBreaksOutOfTheText) {
    const Wrapped w = soft_wrap("the cat sat on the mat", fixed_width(8));
    std::string edited = w.display;
    edited.insert(4, "big ");  // "the big cat \nsat on ..." — the soft breaks after the edit shift, not leak
    size_t cursor = 8;
    EXPECT_EQ(soft_unwrap(w, edited, {&cursor}), "the big cat sat on the mat");
    EXPECT_EQ(cursor, 8u);
}

TEST(SoftWrap, BackspaceOnASoftBreakDeletesTheCharacterBeforeIt) {
    const Wrapped w = soft_wrap("the cat sat", fixed_width(8));
    ASSERT_EQ(w.soft, (std::vector<size_t>{8}));
    std::string edited = w.display;
    edited.erase(8, 1);  // the box deleted the soft '\n'
    size_t cursor = 8;
    EXPECT_EQ(soft_unwrap(w, edited, {&cursor}), "the catsat");
    EXPECT_EQ(cursor, 7u);
}

TEST(SoftWrap, CursorMappingRoundTrips) {
    const Wrapped w = soft_wrap("one two three four five", fixed_width(6));
    for (size_t r = 0; r <= 23; ++r) EXPECT_EQ(soft_to_real(w.soft, real_to_soft(w.soft, r)), r) << r;
}

// Chinese has no spaces (#28, #35): a lesson's mixed text breaks between CJK characters, not only at spaces, and
// never puts a closing mark such as ，or 。at the start of a line.
TEST(SoftWrap, ChineseBreaksBetweenCharactersAndKeepsPunctuationWithTheWordBefore) {
    // Width in columns: ASCII 1, anything else 2 (a CJK character is twice as wide).
    auto cols = [](std::string_view s) {
        float w = 0;
        for (size_t i = 0; i < s.size(); ++i) {
            const auto b = static_cast<unsigned char>(s[i]);
            if ((b & 0xC0) == 0x80) continue;
            w += b < 0x80 ? 1.0f : 2.0f;
        }
        return w;
    };
    const LineBreaker brk = cjk_line_breaker(cols, 12);
    // With a space-only breaker the whole run 在把子层输出加到残差之后 would move to the second line.
    const Wrapped w = soft_wrap("原始 Transformer 在把子层输出加到残差之后。再做归一化", brk);
    std::vector<std::string> lines;
    size_t from = 0;
    for (size_t s : w.soft) {
        lines.push_back(w.display.substr(from, s - from));
        from = s + 1;
    }
    lines.push_back(w.display.substr(from));
    ASSERT_GE(lines.size(), 4u);
    for (const auto& l : lines) {
        EXPECT_LE(cols(l), 12.0f) << l;
        EXPECT_NE(l.rfind("。", 0), 0u) << "a line starts with 。: " << l;
    }
    EXPECT_EQ(lines[0], "原始 ");
    EXPECT_EQ(lines[1], "Transformer ");
    EXPECT_EQ(lines[2], "在把子层输出");  // 6 characters = 12 columns, broken between two of them
    EXPECT_EQ(soft_unwrap(w, w.display), "原始 Transformer 在把子层输出加到残差之后。再做归一化");
    // A word longer than the line breaks inside it, on a character boundary, instead of running off to the right.
    const Wrapped url = soft_wrap("see https://example.org/a/very/long/path", brk);
    EXPECT_EQ(url.display, "see \nhttps://exam\nple.org/a/ve\nry/long/path");
    // 后。 stays together: the character before the 。 moves down to keep it company.
    bool found = false;
    for (const auto& l : lines) found = found || l.find("后。") != std::string::npos;
    EXPECT_TRUE(found);
}

}  // namespace
}  // namespace ts::ui

namespace ts::ui {
namespace {

// Emoji (#28): a character ImGui's 16-bit ImWchar cannot hold ends the frame's share of input, since the text
// box's callback inserts its stand-in after the frame's other characters.
TEST(InputQueue, AnEmojiEndsTheFramesCharacters) {
    InputQueue q;
    for (char32_t c : std::u32string(U"a\U0001F431b")) q.push({InputEvent::Kind::Char, int(c), true, 0, 0});
    const auto first = q.take_frame();
    ASSERT_EQ(first.size(), 2u);
    EXPECT_EQ(first[1].code, 0x1F431);
    const auto second = q.take_frame();
    ASSERT_EQ(second.size(), 1u);
    EXPECT_EQ(second[0].code, 'b');
}

TEST(Astral, StandInsRoundTripAndLeaveOtherTextAlone) {
    const std::string text = "I \xE2\x9D\xA4\xEF\xB8\x8F \xF0\x9F\x90\xB1 cats \xF0\x9F\x90\xB1";  // I ❤️ 🐱 cats 🐱
    const std::string seen = gfx::shown(text);
    EXPECT_NE(seen, text);
    EXPECT_EQ(seen.find("\xF0"), std::string::npos);  // no 4-byte sequence reaches ImGui
    EXPECT_EQ(seen.size(), text.size() - 2);          // each cat: 4 bytes -> a 3-byte stand-in
    EXPECT_EQ(seen.substr(0, 9), text.substr(0, 9));  // "I ❤️ " is in the BMP: unchanged
    EXPECT_EQ(gfx::typed(seen), text);
    const char32_t cat = gfx::stand_in(0x1F431);
    EXPECT_GE(cat, 0xE000u);
    EXPECT_LE(cat, 0xF8FFu);
    EXPECT_EQ(gfx::stand_in(0x1F431), cat);  // one stand-in per character, stable
    EXPECT_EQ(gfx::stand_in(U'a'), U'a');
    // A real Private Use character gets a stand-in of its own, so gfx::typed() cannot mistake it for the cat.
    const std::string pua = "\xEE\x80\x80 \xF0\x9F\x90\xB1";  // U+E000, 🐱
    EXPECT_EQ(gfx::typed(gfx::shown(pua)), pua);
    // Plain text, CJK and invalid UTF-8 pass through unchanged.
    for (const std::string& s : {std::string("plain"), std::string("\xE4\xBD\xA0\xE5\xA5\xBD"), std::string("a\xF0\x9F"),
                                std::string("\xFF\xFE"), std::string()}) {
        EXPECT_EQ(gfx::shown(s), s);
        EXPECT_EQ(gfx::typed(s), s);
    }
    bool listed = false;
    for (const auto& [slot, cp] : gfx::stand_ins()) listed = listed || (slot == cat && cp == 0x1F431);
    EXPECT_TRUE(listed);
}

}  // namespace
}  // namespace ts::ui
