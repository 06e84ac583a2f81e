"""Text for training and testing the tokenizers, all made on this machine: Python's own standard
library sources (English prose and code), paragraphs in many scripts written here, and strings made
to hit the tokenizers' edge cases. Nothing is downloaded."""

import random
import sysconfig
from pathlib import Path

MULTILINGUAL = [
    "The quick brown fox jumps over the lazy dog. It's 3.14159 o'clock, isn't it? They'll say we've won.",
    "Voix ambiguë d'un cœur qui, au zéphyr, préfère les jattes de kiwis. Ça coûte 12,50 € à l'hôtel.",
    "Falsches Üben von Xylophonmusik quält jeden größeren Zwerg. Straße, Maß, Fuß.",
    "Съешь же ещё этих мягких французских булок, да выпей чаю. Москва — столица России.",
    "Ξεσκεπάζω την ψυχοφθόρα βδελυγμία. Η γλώσσα μου έδωσαν ελληνική.",
    "نص حكيم له سر قاطع وذو شأن عظيم مكتوب على ثوب أخضر ومغلف بجلد أزرق.",
    "דג סקרן שט בים מאוכזב ולפתע מצא חברה. שלום עולם!",
    "ऋषियों को सताने वाले दुष्ट राक्षसों के राजा रावण का सर्वनाश करने वाले विष्णुवतार भगवान श्रीराम।",
    "我能吞下玻璃而不伤身体。中华人民共和国成立于1949年。你好，世界！",
    "いろはにほへと ちりぬるを わかよたれそ つねならむ。東京都は日本の首都です。カタカナ、ひらがな。",
    "키스의 고유조건은 입술끼리 만나야 하고 특별한 기술은 필요치 않다. 안녕하세요 세계!",
    "เป็นมนุษย์สุดประเสริฐเลิศคุณค่า กว่าบรรดาฝูงสัตว์เดรัจฉาน",
    "Tiếng Việt có dấu: Chào thế giới, tôi là một mô hình ngôn ngữ.",
    "Emoji: 😀😃😄 👍🏽 👨‍👩‍👧‍👦 🇫🇷🇯🇵 ❤️ 🧑🏿‍🚀 ✨🎉 1️⃣ #️⃣",
    "Math: ∀x∈ℝ, x² ≥ 0; ∑_{i=1}^{n} i = n(n+1)/2; ∫₀¹ eˣ dx ≈ 1.718; α β γ δ ε.",
]

TRICKY = [
    "",
    " ",
    "a",
    "   leading spaces",
    "trailing spaces   ",
    "a    b\t\tc\n\n\nd\r\ne",
    "tabs\tand\u00a0no-break\u00a0spaces\u3000ideographic\u2003em\u2009thin",
    "next line\u0085char, zero\u200bwidth, line\u2028separator, paragraph\u2029separator",
    "\n\n\n",
    "    \n    \n",
    " " * 300 + "x",
    "x" + " " * 257,
    "\t" * 40,
    "a" * 2000,
    "0123456789" * 20,
    "1,234,567.89 and 42nd 3rd 100% 2024-01-02T03:04:05Z",
    "I'M HE'S THEY'LL WE'VE YOU'D SHE'S IT'S I'm I've it'S",
    "don't won't can't shouldn't y'all o'clock rock'n'roll",
    "<|begin_of_text|>Hello<|eot_id|>",
    "system<|start_header_id|>user<|end_header_id|>\n\nWhat is 2+2?<|eot_id|><|start_header_id|>assistant<|end_header_id|>",
    "<|eot_id|><|eot_id|>back to back<|end_of_text|>",
    "partial <|eot_id and <|eot_id| and eot_id|> are text",
    "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n<think>\nhmm\n</think>\nhello<|im_end|>",
    "<|endoftext|>after end",
    "a <mask> b and a<mask>b and  <mask>  end",
    "xyzzy alone, xyzzyx glued, (xyzzy) bracketed",
    "<tag>user defined<tag> and <tag >",
    "e\u0301 vs \u00e9, A\u030a vs \u00c5, \u1100\u1161 vs \uac00",
    "\ufb01ligature \uff21\uff22\uff23 full width \u2460\u2461 circled \u00bd half \u2126 ohm",
    "def f(x):\n    return {'a': [1, 2, 3], \"b\": None}  # comment\n",
    "int main(void) { printf(\"%d\\n\", 42); return 0; }",
    '{"key": "value", "list": [true, false, null], "n": -1.5e+10}',
    "<div class=\"x\">&amp; &lt;tag&gt;</div>",
    "https://example.org/path?q=1&r=two#frag user@example.com",
    "¡¿¿¡ «quotes» “curly” ‘single’ — – … · • ‰ † ‡",
    "\U0001d54f\U0001d550\U0001d551 math double-struck, \U00020000 CJK ext B, \U0001f9ff nazar",
    "mixed日本語and English混在text123数字",
]

FRAGMENTS = (
    [word for line in MULTILINGUAL for word in line.split()]
    + ["<|eot_id|>", "<|begin_of_text|>", "<|im_end|>", "<think>", "<mask>", "<tag>", "xyzzy"]
    + [" ", "  ", "\n", "\t", "\u00a0", "\u3000", "\r\n", "    "]
    + ["😀", "👍🏽", "👨‍👩‍👧", "🇯🇵", "e\u0301", "\ufb01", "123", "4567", "'s", "'LL", "(", ")", "{}", "->", "=="]
)


def _stdlib_files():
    root = Path(sysconfig.get_paths()["stdlib"])
    return sorted(p for p in root.glob("*.py") if p.stat().st_size > 2000)


def training_text() -> str:
    """About 3 MB: standard-library sources, the multilingual paragraphs and the tricky strings."""
    files = _stdlib_files()[:120]
    parts = [p.read_text(encoding="utf-8", errors="replace") for p in files]
    parts += MULTILINGUAL * 30 + TRICKY * 5
    return "\n".join(parts)


def test_strings(count: int = 1500) -> list[str]:
    """The tricky strings and paragraphs, held-out standard-library lines, and random mixes."""
    rng = random.Random(27)
    strings = list(TRICKY) + list(MULTILINGUAL)
    held_out = _stdlib_files()[120:200]
    lines = []
    for path in held_out:
        lines += path.read_text(encoding="utf-8", errors="replace").splitlines()
    lines = [line for line in lines if line.strip()]
    rng.shuffle(lines)
    strings += lines[: count // 2]
    # Several consecutive lines, newlines and indentation included.
    for _ in range(count // 8):
        start = rng.randrange(len(lines) - 5)
        strings.append("\n".join(lines[start : start + rng.randint(2, 5)]))
    while len(strings) < count:
        strings.append("".join(rng.choice(FRAGMENTS) + rng.choice(["", " ", ""]) for _ in range(rng.randint(1, 25))))
    return strings


def invalid_utf8_strings() -> list[bytes]:
    """Bytes that are not UTF-8, for the formats whose encoders take bytes (SentencePiece, llama2.c)."""
    return [
        b"abc\xff def",
        b"\xc3",
        b"caf\xc3",
        b"\xe2\x82 euro cut",
        b"\x80\x80 stray continuation",
        b"ok \xf0\x9f\x98 emoji cut \xf0\x9f\x98\x80 whole",
        b"\xed\xa0\x80 surrogate",
        b"\xc0\xaf overlong",
    ]
