//! Quantities in prose, read into one notation on both sides of a match: `$6`, `6 USD`,
//! `6 美元` and `6 美金` are one amount; `500K`, `500,000` and `50 万` one number; `30000 ms`
//! and `30 秒` one duration; `08:05`, `8:05 AM` and `上午8点05分` one clock time;
//! `三百二十元` is `320 元`. A number written inside a code or name (`G102`, `v3.4.1`,
//! `atlas-medium-2`) is not a quantity here: it is part of a token fact.

use std::sync::OnceLock;

/// What a quantity measures. Values of the same dimension compare in its base unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dim {
    /// A bare number, or one counting something named by `Quantity::word`.
    Plain,
    /// Money in a currency.
    Money(Currency),
    /// A percentage (the value is the number of percent).
    Percent,
    /// A temperature in °C (°F is converted).
    Temp,
    /// A duration in seconds.
    Duration,
    /// A time of day in minutes after midnight.
    Clock,
    /// A date as `yyyymmdd` (`yyyy` 0 when the year is not written).
    Date,
    /// A size in bytes.
    Bytes,
    /// A speed in metres per second (`km/h`, `mph`, `m/s`, `knots`).
    Speed,
    /// A length in metres (`km`, `miles`, `ft`, `公里`).
    Length,
    /// A mass in kilograms (`kg`, `lb`, `公斤`, `斤`).
    Mass,
}

impl Dim {
    /// Whether both are money in currencies one amount can be written in.
    pub fn same_currency(self, other: Dim) -> bool {
        matches!((self, other), (Dim::Money(a), Dim::Money(b)) if a.compatible(b))
    }
}

/// A currency, as far as telling amounts apart needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Currency {
    /// `$`, USD, dollars, 美元, 美金.
    Usd,
    /// `元` alone: yuan of whichever country the text is about.
    Yuan,
    /// RMB, CNY, 人民币.
    Cny,
    /// NT$, TWD, 新台币.
    Twd,
    /// €, EUR, 欧元.
    Eur,
    /// £, GBP, 英镑.
    Gbp,
    /// ¥ (yen or yuan), JPY, 日元.
    Yen,
    /// HK$, HKD, 港元.
    Hkd,
}

impl Currency {
    fn compatible(self, other: Currency) -> bool {
        use Currency::*;
        self == other
            || matches!(
                (self, other),
                (Yuan, Cny | Twd | Yen) | (Cny | Twd | Yen, Yuan) | (Yen, Cny) | (Cny, Yen)
            )
    }
}

/// One quantity found in a text.
#[derive(Debug, Clone, PartialEq)]
pub struct Quantity {
    /// The value in the dimension's base unit.
    pub value: f64,
    /// The number as written, with its magnitude (`500K` is 500000), before unit conversion.
    pub raw: f64,
    /// Its dimension.
    pub dim: Dim,
    /// The word it counts (`seats`, `次`), for a plain number; empty otherwise.
    pub word: String,
    /// Decimal places as written (the answer's precision, for computed values).
    pub decimals: u8,
    /// Base units per written unit (a value rounded in the written unit differs by up to
    /// half a written unit).
    pub scale: f64,
    /// Byte span in the scanned text.
    pub start: usize,
    /// End of the span.
    pub end: usize,
    /// Written in °F (a temperature difference converts without the offset).
    pub fahrenheit: bool,
}

impl Quantity {
    /// The text as written.
    pub fn text<'a>(&self, s: &'a str) -> &'a str {
        &s[self.start..self.end]
    }

    /// Whether `other` (from the evidence) states this quantity.
    pub fn same_as(&self, other: &Quantity) -> bool {
        match (self.dim, other.dim) {
            (Dim::Clock, Dim::Clock) => self.value == other.value,
            (Dim::Date, Dim::Date) => {
                let (a, b) = (self.value as u64, other.value as u64);
                a == b || ((a / 10000 == 0 || b / 10000 == 0) && a % 10000 == b % 10000)
            }
            (Dim::Clock | Dim::Date, _) | (_, Dim::Clock | Dim::Date) => false,
            // A speed is often written as its distance an hour ("时速 18 公里" for 18 km/h).
            (Dim::Length, Dim::Speed) | (Dim::Speed, Dim::Length) => {
                close(self.raw, other.raw, 0.0)
            }
            // A count of something (`20 个席位`, `10 seats`) is no price or rate.
            (Dim::Plain, Dim::Money(_)) if counts(&self.word) => false,
            (Dim::Plain, _) | (_, Dim::Plain) => {
                close(self.raw, other.raw, 0.0) || close(self.value, other.value, 0.0)
            }
            (Dim::Money(a), Dim::Money(b)) => {
                a.compatible(b) && close(self.value, other.value, 0.0)
            }
            (a, b) if a == b => {
                let tolerance = if self.scale != other.scale || self.fahrenheit != other.fahrenheit
                {
                    self.rounding()
                } else {
                    0.0
                };
                close(self.value, other.value, tolerance)
            }
            _ => false,
        }
    }

    /// Half a unit of the last written digit, in base units.
    pub fn rounding(&self) -> f64 {
        let unit = if self.fahrenheit {
            5.0 / 9.0
        } else {
            self.scale
        };
        0.5 * 10f64.powi(-i32::from(self.decimals)) * unit
    }
}

/// Whether a number's word is a Chinese measure word (`20 个席位`, `5 次`): it counts.
fn counts(word: &str) -> bool {
    word.trim().starts_with([
        '个', '位', '人', '名', '次', '张', '份', '件', '条', '家', '台', '座',
    ])
}

fn close(a: f64, b: f64, tolerance: f64) -> bool {
    (a - b).abs() <= tolerance.max(1e-9 * a.abs().max(b.abs()).max(1.0))
}

/// Text folded for scanning: full-width forms as ASCII, typographic dashes as `-`,
/// Traditional Chinese as Simplified (`萬` is `万`, `點` is `点`), byte offsets of the
/// folded text.
pub fn fold(s: &str) -> String {
    if s.is_ascii() {
        return s.to_string();
    }
    // Most characters fold to themselves: the text is copied in runs, broken only where
    // one changes (a push per character was a third of the tracer's time on CJK text).
    // ASCII is skipped eight bytes at a time, and an ideograph (three bytes) is decoded
    // and looked up in place.
    let (table, changes) = simplified_table();
    let b = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut copied = 0;
    let mut i = 0;
    while i < b.len() {
        while i + 8 <= b.len()
            && u64::from_le_bytes(b[i..i + 8].try_into().expect("eight bytes"))
                & 0x8080_8080_8080_8080
                == 0
        {
            i += 8;
        }
        let Some(&lead) = b.get(i) else { break };
        if lead < 0x80 {
            i += 1;
            continue;
        }
        let (c, folded) = if (0xE0..0xF0).contains(&lead) {
            let code = u32::from(lead & 0x0F) << 12
                | u32::from(b[i + 1] & 0x3F) << 6
                | u32::from(b[i + 2] & 0x3F);
            if (SIMPLIFIED_FROM..SIMPLIFIED_TO).contains(&code) {
                // Most ideographs are Simplified already: one bit says so.
                let k = (code - SIMPLIFIED_FROM) as usize;
                if changes[k / 64] >> (k % 64) & 1 == 0 {
                    i += 3;
                    continue;
                }
                (char::from_u32(code).unwrap_or('\u{FFFD}'), table[k])
            } else {
                let c = char::from_u32(code).unwrap_or('\u{FFFD}');
                (c, fold_char(c))
            }
        } else {
            let c = s[i..].chars().next().expect("a character at a boundary");
            (c, fold_char(c))
        };
        if folded != c {
            out.push_str(&s[copied..i]);
            out.push(folded);
            copied = i + c.len_utf8();
        }
        i += c.len_utf8();
    }
    out.push_str(&s[copied..]);
    out
}

/// One character as [`fold`] folds it.
fn fold_char(c: char) -> char {
    simplified(match c {
        '\u{FF01}'..='\u{FF5E}' => char::from_u32(c as u32 - 0xFEE0).unwrap_or(c),
        '\u{3000}' | '\u{00A0}' | '\u{202F}' | '\u{2009}' => ' ',
        '\u{FFE5}' => '¥',
        '\u{FFE0}' => '¢',
        c => crate::text::fold_dash(c),
    })
}

/// The ideograph blocks [`simplified`]'s table covers.
const SIMPLIFIED_FROM: u32 = 0x3400;
const SIMPLIFIED_TO: u32 = 0xA000;

/// A Traditional Chinese character as Simplified (`義` as `义`), from a table of the
/// ideograph blocks built once from fast2s's mapping.
fn simplified(c: char) -> char {
    let code = c as u32;
    if !(SIMPLIFIED_FROM..SIMPLIFIED_TO).contains(&code) {
        return c;
    }
    simplified_table().0[(code - SIMPLIFIED_FROM) as usize]
}

/// [`simplified`] of every code point of the ideograph blocks, and a bit per code point
/// set where that changes it; built once.
fn simplified_table() -> (&'static [char], &'static [u64]) {
    static TABLE: OnceLock<(Vec<char>, Vec<u64>)> = OnceLock::new();
    let (table, changes) = TABLE.get_or_init(|| {
        let table: Vec<char> = (SIMPLIFIED_FROM..SIMPLIFIED_TO)
            .map(|u| {
                let c = char::from_u32(u).unwrap_or(' ');
                let mut s = fast2s::convert(c.encode_utf8(&mut [0; 4]));
                match (s.pop(), s.is_empty()) {
                    (Some(one), true) => one,
                    _ => c,
                }
            })
            .collect();
        let mut changes = vec![0u64; table.len().div_ceil(64)];
        for (k, &to) in table.iter().enumerate() {
            if to as u32 != SIMPLIFIED_FROM + k as u32 {
                changes[k / 64] |= 1 << (k % 64);
            }
        }
        (table, changes)
    });
    (table, changes)
}

const ZH_DIGITS: &str = "零〇一二两三四五六七八九十百千万亿";

fn zh_digit(c: char) -> Option<u32> {
    Some(match c {
        '零' | '〇' => 0,
        '一' => 1,
        '二' | '两' => 2,
        '三' => 3,
        '四' => 4,
        '五' => 5,
        '六' => 6,
        '七' => 7,
        '八' => 8,
        '九' => 9,
        _ => return None,
    })
}

/// The value of a Chinese numeral (`三百二十` = 320, `一万二` is not read: 12000 needs `一万二千`).
fn zh_value(s: &str) -> Option<f64> {
    // Digits without units are read by position: `二〇二六` is 2026 (a year, a number
    // spelled out digit by digit).
    if s.chars().count() >= 2 && s.chars().all(|c| zh_digit(c).is_some()) {
        return Some(
            s.chars()
                .filter_map(zh_digit)
                .fold(0f64, |n, d| n * 10.0 + f64::from(d)),
        );
    }
    let mut total = 0f64;
    let mut section = 0f64;
    let mut digit: Option<f64> = None;
    for c in s.chars() {
        if let Some(d) = zh_digit(c) {
            digit = Some(f64::from(d));
            continue;
        }
        let unit = match c {
            '十' => 10.0,
            '百' => 100.0,
            '千' => 1000.0,
            '万' => 10_000.0,
            '亿' => 100_000_000.0,
            _ => return None,
        };
        if unit >= 10_000.0 {
            section += digit.take().unwrap_or(0.0);
            total = (total + section.max(if section == 0.0 { 1.0 } else { 0.0 })) * unit;
            section = 0.0;
        } else {
            section += digit.take().unwrap_or(1.0) * unit;
        }
    }
    Some(total + section + digit.unwrap_or(0.0))
}

struct Unit {
    dim: Dim,
    scale: f64,
    fahrenheit: bool,
}

/// Suffix units, longest first within each group; `word` says whether the unit must end at
/// a word boundary (ASCII letters).
fn suffix_unit(rest: &str) -> Option<(usize, Unit)> {
    const TABLE: &[(&str, char, f64)] = &[
        // (text, kind, scale) — kinds: $ money usd, Y yuan, C cny, T twd, E eur, G gbp,
        // J yen, H hkd, % percent, c celsius, f fahrenheit, s seconds, b bytes
        ("milliseconds", 's', 0.001),
        ("millisecond", 's', 0.001),
        ("毫秒", 's', 0.001),
        ("msec", 's', 0.001),
        ("ms", 's', 0.001),
        ("seconds", 's', 1.0),
        ("second", 's', 1.0),
        ("secs", 's', 1.0),
        ("sec", 's', 1.0),
        ("秒钟", 's', 1.0),
        ("秒", 's', 1.0),
        ("s", 's', 1.0),
        ("minutes", 's', 60.0),
        ("minute", 's', 60.0),
        ("mins", 's', 60.0),
        ("min", 's', 60.0),
        ("分钟", 's', 60.0),
        ("分", 's', 60.0),
        ("hours", 's', 3600.0),
        ("hour", 's', 3600.0),
        ("hrs", 's', 3600.0),
        ("hr", 's', 3600.0),
        ("h", 's', 3600.0),
        ("个小时", 's', 3600.0),
        ("小时", 's', 3600.0),
        ("business days", 's', 86400.0),
        ("working days", 's', 86400.0),
        ("days", 's', 86400.0),
        ("day", 's', 86400.0),
        ("个工作日", 's', 86400.0),
        ("工作日", 's', 86400.0),
        ("天", 's', 86400.0),
        ("weeks", 's', 604_800.0),
        ("week", 's', 604_800.0),
        ("个星期", 's', 604_800.0),
        ("星期", 's', 604_800.0),
        ("周", 's', 604_800.0),
        ("months", 's', 2_592_000.0),
        ("month", 's', 2_592_000.0),
        ("个月", 's', 2_592_000.0),
        ("years", 's', 31_536_000.0),
        ("year", 's', 31_536_000.0),
        ("percent", '%', 1.0),
        // `五折`, `8 折`: a price at that many tenths.
        ("折", '%', 10.0),
        ("per cent", '%', 1.0),
        ("%", '%', 1.0),
        ("°c", 'c', 1.0),
        ("° c", 'c', 1.0),
        ("℃", 'c', 1.0),
        ("°f", 'f', 1.0),
        ("° f", 'f', 1.0),
        ("℉", 'f', 1.0),
        ("degrees celsius", 'c', 1.0),
        ("degrees fahrenheit", 'f', 1.0),
        ("degrees", 'c', 1.0),
        ("degree", 'c', 1.0),
        ("摄氏度", 'c', 1.0),
        ("度", 'c', 1.0),
        ("°", 'c', 1.0),
        // Speeds in m/s, before lengths (`km/h` before `km`).
        ("km/h", 'v', 1.0 / 3.6),
        ("kmh", 'v', 1.0 / 3.6),
        ("kph", 'v', 1.0 / 3.6),
        ("kilometres per hour", 'v', 1.0 / 3.6),
        ("kilometers per hour", 'v', 1.0 / 3.6),
        ("公里/小时", 'v', 1.0 / 3.6),
        ("公里每小时", 'v', 1.0 / 3.6),
        ("千米/小时", 'v', 1.0 / 3.6),
        ("千米每小时", 'v', 1.0 / 3.6),
        ("mph", 'v', 0.447_04),
        ("miles per hour", 'v', 0.447_04),
        ("英里/小时", 'v', 0.447_04),
        ("英里每小时", 'v', 0.447_04),
        ("m/s", 'v', 1.0),
        ("米/秒", 'v', 1.0),
        ("米每秒", 'v', 1.0),
        ("knots", 'v', 0.514_444),
        // Lengths in metres.
        ("kilometres", 'l', 1000.0),
        ("kilometers", 'l', 1000.0),
        ("km", 'l', 1000.0),
        ("公里", 'l', 1000.0),
        ("千米", 'l', 1000.0),
        ("miles", 'l', 1609.344),
        ("mile", 'l', 1609.344),
        ("mi", 'l', 1609.344),
        ("英里", 'l', 1609.344),
        ("metres", 'l', 1.0),
        ("meters", 'l', 1.0),
        ("米", 'l', 1.0),
        ("feet", 'l', 0.3048),
        ("ft", 'l', 0.3048),
        ("英尺", 'l', 0.3048),
        ("cm", 'l', 0.01),
        ("厘米", 'l', 0.01),
        ("公分", 'l', 0.01),
        ("inches", 'l', 0.0254),
        ("英寸", 'l', 0.0254),
        // Masses in kilograms.
        ("kg", 'm', 1.0),
        ("kilograms", 'm', 1.0),
        ("公斤", 'm', 1.0),
        ("千克", 'm', 1.0),
        ("lbs", 'm', 0.453_592_37),
        ("lb", 'm', 0.453_592_37),
        ("磅", 'm', 0.453_592_37),
        ("斤", 'm', 0.5),
        ("tb", 'b', 1e12),
        ("gb", 'b', 1e9),
        ("mb", 'b', 1e6),
        ("kb", 'b', 1e3),
        ("usd", '$', 1.0),
        ("us dollars", '$', 1.0),
        ("dollars", '$', 1.0),
        ("dollar", '$', 1.0),
        ("bucks", '$', 1.0),
        ("美元", '$', 1.0),
        ("美金", '$', 1.0),
        ("刀", '$', 1.0),
        ("人民币", 'C', 1.0),
        ("rmb", 'C', 1.0),
        ("cny", 'C', 1.0),
        ("yuan", 'Y', 1.0),
        ("新台币", 'T', 1.0),
        ("台币", 'T', 1.0),
        ("twd", 'T', 1.0),
        ("ntd", 'T', 1.0),
        ("港元", 'H', 1.0),
        ("港币", 'H', 1.0),
        ("hkd", 'H', 1.0),
        ("日元", 'J', 1.0),
        ("jpy", 'J', 1.0),
        ("yen", 'J', 1.0),
        ("欧元", 'E', 1.0),
        ("euros", 'E', 1.0),
        ("euro", 'E', 1.0),
        ("eur", 'E', 1.0),
        ("英镑", 'G', 1.0),
        ("gbp", 'G', 1.0),
        ("元", 'Y', 1.0),
        ("块钱", 'Y', 1.0),
        ("块", 'Y', 1.0),
        ("蚊", 'Y', 1.0),
    ];
    // Per number in the evidence: the first byte rules out most of the table at once —
    // the entries each first byte can open, in the table's order, listed once.
    static BY_FIRST: OnceLock<Vec<Vec<u8>>> = OnceLock::new();
    let by_first = BY_FIRST.get_or_init(|| {
        (0..=255u8)
            .map(|b| {
                (0..TABLE.len())
                    .filter(|&i| TABLE[i].0.as_bytes()[0].eq_ignore_ascii_case(&b))
                    .map(|i| u8::try_from(i).expect("a table of fewer than 256 units"))
                    .collect()
            })
            .collect()
    });
    let first = rest.as_bytes().first()?;
    for &i in &by_first[usize::from(*first)] {
        let (text, kind, scale) = &TABLE[usize::from(i)];
        if !starts_ci(rest, text) {
            continue;
        }
        // An ASCII unit must end at a word boundary: `5 secs` yes, `5 seats` no.
        let last_ascii = text.chars().last().is_some_and(|c| c.is_ascii_alphabetic());
        if last_ascii
            && rest
                .as_bytes()
                .get(text.len())
                .is_some_and(u8::is_ascii_alphanumeric)
        {
            continue;
        }
        // `两块钱` is money; `两块内容`, `三块地` count pieces.
        if *text == "块"
            && rest[text.len()..]
                .chars()
                .next()
                .is_some_and(|c| c != '钱' && c > '\u{2e7f}' && c.is_alphabetic())
        {
            continue;
        }
        let dim = match kind {
            '$' => Dim::Money(Currency::Usd),
            'Y' => Dim::Money(Currency::Yuan),
            'C' => Dim::Money(Currency::Cny),
            'T' => Dim::Money(Currency::Twd),
            'E' => Dim::Money(Currency::Eur),
            'G' => Dim::Money(Currency::Gbp),
            'J' => Dim::Money(Currency::Yen),
            'H' => Dim::Money(Currency::Hkd),
            '%' => Dim::Percent,
            'c' | 'f' => Dim::Temp,
            'b' => Dim::Bytes,
            'v' => Dim::Speed,
            'l' => Dim::Length,
            'm' => Dim::Mass,
            _ => Dim::Duration,
        };
        return Some((
            text.len(),
            Unit {
                dim,
                scale: *scale,
                fahrenheit: *kind == 'f',
            },
        ));
    }
    None
}

/// A currency written before the number (`$`, `US$`, `NT$`, `€`, `USD `, `RMB`).
fn prefix_currency(before: &str) -> Option<(usize, Currency)> {
    let t = before.trim_end_matches(' ');
    let spaces = before.len() - t.len();
    if spaces > 1 {
        return None;
    }
    const TABLE: &[(&str, Currency)] = &[
        ("US$", Currency::Usd),
        ("NT$", Currency::Twd),
        ("HK$", Currency::Hkd),
        ("$", Currency::Usd),
        ("€", Currency::Eur),
        ("£", Currency::Gbp),
        ("¥", Currency::Yen),
        ("USD", Currency::Usd),
        ("RMB", Currency::Cny),
        ("CNY", Currency::Cny),
        ("TWD", Currency::Twd),
        ("NTD", Currency::Twd),
        ("EUR", Currency::Eur),
        ("GBP", Currency::Gbp),
        ("JPY", Currency::Yen),
        ("HKD", Currency::Hkd),
        ("人民币", Currency::Cny),
        ("新台币", Currency::Twd),
    ];
    for (text, cur) in TABLE {
        if t.len() >= text.len()
            && t.is_char_boundary(t.len() - text.len())
            && t[t.len() - text.len()..].eq_ignore_ascii_case(text)
        {
            let head = &t[..t.len() - text.len()];
            // `USD` as a word, not the end of `XUSD`.
            if text.chars().all(|c| c.is_ascii_alphabetic())
                && head
                    .chars()
                    .last()
                    .is_some_and(|c| c.is_ascii_alphanumeric())
            {
                continue;
            }
            return Some((text.len() + spaces, *cur));
        }
    }
    None
}

/// A magnitude after a number: `K`, `thousand`, `万`, `M`, `million`, `百万`, `亿`, `B`.
fn magnitude(rest: &str) -> Option<(usize, f64)> {
    let t = rest.strip_prefix(' ').unwrap_or(rest);
    let skip = rest.len() - t.len();
    const WORDS: &[(&str, f64)] = &[
        ("thousand", 1e3),
        ("million", 1e6),
        ("billion", 1e9),
        ("trillion", 1e12),
        ("百万", 1e6),
        ("千万", 1e7),
        ("千", 1e3),
        ("万", 1e4),
        ("亿", 1e8),
        ("mn", 1e6),
        ("bn", 1e9),
    ];
    for (w, m) in WORDS {
        if starts_ci(t, w)
            && !(w.is_ascii()
                && t.as_bytes()
                    .get(w.len())
                    .is_some_and(u8::is_ascii_alphabetic))
        {
            return Some((skip + w.len(), *m));
        }
    }
    // A single letter only right after the digits: `500K`, `1.5M` (not `6 MTok`).
    if skip == 0 {
        let mut cs = t.chars();
        if let Some(c) = cs.next() {
            let m = match c {
                'k' | 'K' => 1e3,
                'M' => 1e6,
                'B' => 1e9,
                _ => return None,
            };
            if cs.next().is_none_or(|n| !n.is_ascii_alphanumeric()) {
                return Some((1, m));
            }
        }
    }
    None
}

/// Whether `hay` starts with `needle` (lowercase), ASCII letters compared without case.
fn starts_ci(hay: &str, needle: &str) -> bool {
    let (h, n) = (hay.as_bytes(), needle.as_bytes());
    h.len() >= n.len() && h[..n.len()].eq_ignore_ascii_case(n)
}

fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// The word counted after a plain number (`5,000 API calls` counts `api`; `10 seats`).
fn counted_word(rest: &str) -> String {
    let t = rest.trim_start_matches([' ', '-']);
    let w: String = t
        .chars()
        .take_while(|c| c.is_alphanumeric() && !('\u{4E00}'..='\u{9FFF}').contains(c))
        .collect();
    if !w.is_empty() {
        return w.to_lowercase().trim_end_matches('s').to_string();
    }
    // A Chinese measure word.
    t.chars()
        .next()
        .filter(|c| "个位名人家台条份次张件间晚席".contains(*c))
        .map(String::from)
        .unwrap_or_default()
}

/// Every quantity in a folded text (see [`fold`]), in text order.
pub fn scan(s: &str) -> Vec<Quantity> {
    let b = s.as_bytes();
    let mut out: Vec<Quantity> = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_digit() {
            i = scan_arabic(s, i, &mut out);
        } else if c >= 0xE0 {
            let ch = s[i..].chars().next().unwrap_or(' ');
            if zh_digit(ch).is_some() || matches!(ch, '十' | '百' | '千' | '万' | '亿') {
                i = scan_chinese(s, i, &mut out);
            } else {
                i += ch.len_utf8();
            }
        } else {
            i += 1;
        }
    }
    // Spans never overlap (a date read back from its month word keeps the first reading).
    let mut end = 0;
    out.retain(|q| {
        let keep = q.start >= end && q.end > q.start && q.end <= s.len();
        if keep {
            end = q.end;
        }
        keep
    });
    merge_compound_durations(s, &mut out);
    out
}

/// `5 小时 23 分钟` and `5 h 23 min` are one duration.
fn merge_compound_durations(s: &str, out: &mut Vec<Quantity>) {
    let mut i = 0;
    while i + 1 < out.len() {
        let (a, b) = (&out[i], &out[i + 1]);
        let between = &s[a.end..b.start];
        let joined = between.trim().is_empty() || between.trim() == "and";
        if a.dim == Dim::Duration && b.dim == Dim::Duration && b.scale < a.scale && joined {
            let merged = Quantity {
                value: a.value + b.value,
                raw: a.value + b.value,
                dim: Dim::Duration,
                word: String::new(),
                decimals: b.decimals,
                scale: b.scale,
                start: a.start,
                end: b.end,
                fahrenheit: false,
            };
            out[i] = merged;
            out.remove(i + 1);
        } else {
            i += 1;
        }
    }
}

fn digits_end(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    i
}

fn scan_arabic(s: &str, start: usize, out: &mut Vec<Quantity>) -> usize {
    let b = s.as_bytes();
    // Part of a token (`G102`, `atlas-medium-2`, `v3`, `x86_64`): skip the whole token.
    let glued = start > 0
        && (is_word_byte(b[start - 1])
            || (matches!(b[start - 1], b'-' | b'.' | b'/')
                && start > 1
                && b[start - 2].is_ascii_alphabetic()));
    let mut j = digits_end(b, start);
    if glued {
        return skip_token(b, j);
    }
    // Thousands groups: `5,000`, `48,000`.
    // The integer part, with thousands groups (`5,000`, `48,000`).
    let digits = |from: usize, to: usize, acc: f64| {
        b[from..to]
            .iter()
            .fold(acc, |v, d| v * 10.0 + f64::from(d - b'0'))
    };
    let mut raw = digits(start, j, 0.0);
    let mut int_digits = j - start;
    while j + 3 < b.len()
        && b[j] == b','
        && b[j + 1..j + 4].iter().all(u8::is_ascii_digit)
        && !b.get(j + 4).is_some_and(u8::is_ascii_digit)
    {
        raw = digits(j + 1, j + 4, raw);
        int_digits += 3;
        j += 4;
    }
    let mut decimals = 0u8;
    if j + 1 < b.len() && b[j] == b'.' && b[j + 1].is_ascii_digit() {
        let k = digits_end(b, j + 1);
        // `3.4.1`, `192.168.0.1`: a version or address, a token.
        if k + 1 < b.len() && b[k] == b'.' && b[k + 1].is_ascii_digit() {
            return skip_token(b, k);
        }
        decimals = (k - j - 1).min(9) as u8;
        // Parsed as written, so `0.1` is the f64 `0.1`.
        raw = s[start..k].replace(',', "").parse().unwrap_or(raw);
        j = k;
    }
    // A clock time: `08:05`, `13:28`, `8:05 pm`.
    if b.get(j) == Some(&b':')
        && b.get(j + 1).is_some_and(u8::is_ascii_digit)
        && b.get(j + 2).is_some_and(u8::is_ascii_digit)
        && !b.get(j + 3).is_some_and(u8::is_ascii_digit)
        && int_digits <= 2
        && decimals == 0
    {
        let minutes: f64 = s[j + 1..j + 3].parse().unwrap_or(0.0);
        let mut end = j + 3;
        // Seconds are part of the time (`12:04:31`).
        if b.get(end) == Some(&b':')
            && b.get(end + 1).is_some_and(u8::is_ascii_digit)
            && b.get(end + 2).is_some_and(u8::is_ascii_digit)
            && !b.get(end + 3).is_some_and(u8::is_ascii_digit)
        {
            end += 3;
        }
        let mut hours = raw;
        let rest = s[end..].trim_start_matches(' ');
        let lower = rest
            .get(..4.min(rest.len()))
            .unwrap_or("")
            .to_ascii_lowercase();
        if lower.starts_with("pm") || lower.starts_with("p.m") {
            if hours < 12.0 {
                hours += 12.0;
            }
            end = s.len() - rest.len() + if lower.starts_with("p.m") { 3 } else { 2 };
        } else if lower.starts_with("am") || lower.starts_with("a.m") {
            if hours == 12.0 {
                hours = 0.0;
            }
            end = s.len() - rest.len() + if lower.starts_with("a.m") { 3 } else { 2 };
        } else if hours < 12.0 {
            // "1:28 in the afternoon", "7:50 in the evening", "9 at night".
            let phrase = rest
                .get(..20.min(rest.len()))
                .unwrap_or("")
                .to_ascii_lowercase();
            if ["in the afternoon", "in the evening", "at night", "tonight"]
                .iter()
                .any(|p| phrase.starts_with(p))
            {
                hours += 12.0;
            }
        }
        hours = day_part(&s[..start], hours);
        if hours <= 24.0 && minutes < 60.0 {
            out.push(clock(hours * 60.0 + minutes, start, end));
            return end;
        }
        return end;
    }
    // A date: `2026-11-20`, `2026/11/20`.
    if int_digits == 4 && decimals == 0 && matches!(b.get(j), Some(b'-') | Some(b'/')) {
        let sep = b[j];
        let m_end = digits_end(b, j + 1);
        if (1..=2).contains(&(m_end - j - 1)) && b.get(m_end) == Some(&sep) {
            let d_end = digits_end(b, m_end + 1);
            if (1..=2).contains(&(d_end - m_end - 1))
                && !b.get(d_end).is_some_and(u8::is_ascii_alphanumeric)
            {
                let m: f64 = s[j + 1..m_end].parse().unwrap_or(0.0);
                let d: f64 = s[m_end + 1..d_end].parse().unwrap_or(0.0);
                out.push(date(raw * 10000.0 + m * 100.0 + d, raw, start, d_end));
                return d_end;
            }
        }
    }
    // A Chinese date or clock: `2026年11月20日`, `11月20日`, `8点05分`.
    if let Some(q) = chinese_date_or_clock(s, start, j, raw) {
        let end = q.end;
        out.push(q);
        return end;
    }
    // An English date: `November 20, 2026` / `20 November 2026` / `Nov 20`.
    if let Some(q) = english_date(s, start, j, raw) {
        let end = q.end;
        out.push(q);
        return end;
    }
    let mut end = j;
    if let Some((len, m)) = magnitude(&s[end..]) {
        raw *= m;
        end += len;
    }
    // `10 am`, `10pm`: a clock time without minutes.
    if int_digits <= 2 && decimals == 0 && (1.0..=12.0).contains(&raw) {
        let rest = s[end..].strip_prefix(' ').unwrap_or(&s[end..]);
        let lower = rest
            .get(..rest.len().min(4))
            .unwrap_or("")
            .to_ascii_lowercase();
        let word_end = |n: usize| {
            !lower[n.min(lower.len())..]
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic())
        };
        let pm = (lower.starts_with("pm") && word_end(2)) || lower.starts_with("p.m");
        let am = (lower.starts_with("am") && word_end(2)) || lower.starts_with("a.m");
        if pm || am {
            let hours = match (pm, raw == 12.0) {
                (true, false) => raw + 12.0,
                (false, true) => 0.0,
                _ => raw,
            };
            let stop = s.len() - rest.len()
                + if lower.contains('.') {
                    4.min(rest.len())
                } else {
                    2
                };
            out.push(quantity(
                hours * 60.0,
                hours * 60.0,
                Dim::Clock,
                start,
                stop,
                0,
                1.0,
            ));
            return stop;
        }
    }
    let (pre_len, pre_cur) = prefix_currency(&s[..start]).map_or((0, None), |(l, c)| (l, Some(c)));
    // One space or a hyphen may stand between a number and its unit (`30 s`, `12-degree`).
    let unit_at = match b.get(end) {
        Some(b' ') if b.get(end + 1) != Some(&b' ') => end + 1,
        Some(b'-') if b.get(end + 1).is_some_and(u8::is_ascii_alphabetic) => end + 1,
        _ => end,
    };
    // Glued letters that are no unit make a token (`5xx`, `400BF`).
    let unit = suffix_unit(&s[unit_at..]);
    if unit.is_none()
        && unit_at == end
        && b.get(end).is_some_and(u8::is_ascii_alphabetic)
        && pre_cur.is_none()
    {
        return skip_token(b, end);
    }
    let (dim, scale, fahrenheit, unit_len) = match (pre_cur, unit) {
        // `US$ 6 美元`: the written unit decides.
        (Some(_), Some((len, u))) if matches!(u.dim, Dim::Money(_)) => (u.dim, 1.0, false, len),
        (Some(c), _) => (Dim::Money(c), 1.0, false, 0),
        (None, Some((len, u))) => (u.dim, u.scale, u.fahrenheit, len),
        (None, None) => (Dim::Plain, 1.0, false, 0),
    };
    let stop = if unit_len > 0 {
        unit_at + unit_len
    } else {
        end
    };
    let value = if fahrenheit {
        (raw - 32.0) * 5.0 / 9.0
    } else if dim == Dim::Percent && scale == 10.0 && raw >= 10.0 {
        // `85 折` is 85% of the price (`8.5 折`, `8 折` count tenths).
        raw
    } else {
        raw * scale
    };
    let mut q = quantity(value, raw, dim, start - pre_len, stop, decimals, scale);
    q.fahrenheit = fahrenheit;
    // A range (`15-30 minutes`, `3–5 天`, `10~20 元`): the first bound takes the unit the
    // second is written with.
    if dim == Dim::Plain && !fahrenheit {
        let sep = ["-", "–", "~", "～", "到", "至"]
            .iter()
            .find(|d| s[end..].starts_with(*d))
            .map(|d| d.len());
        if let Some(sep) = sep.filter(|n| b.get(end + n).is_some_and(u8::is_ascii_digit)) {
            let mut bound = Vec::new();
            let after = scan_arabic(s, end + sep, &mut bound);
            if let Some(second) = bound
                .first()
                .filter(|u| u.dim != Dim::Plain && u.raw != 0.0)
            {
                let mut first = q.clone();
                first.dim = second.dim;
                first.scale = second.scale;
                first.value = raw * second.value / second.raw;
                first.end = end;
                out.push(first);
                out.append(&mut bound);
                return after;
            }
        }
    }
    if dim == Dim::Plain {
        q.word = counted_word(&s[end..]);
        // The fact reads with what it counts: `1000 requests per minute`, `10 seats`.
        if !q.word.is_empty() && q.word.is_ascii() {
            q.end = counted_end(s, end);
        }
    }
    let stop = q.end;
    out.push(q);
    stop
}

/// The end of the counted word after a number, with a rate (`per minute`, `/day`).
fn counted_end(s: &str, from: usize) -> usize {
    let b = s.as_bytes();
    let mut i = from;
    while i < b.len() && matches!(b[i], b' ' | b'-') {
        i += 1;
    }
    while i < b.len() && b[i].is_ascii_alphanumeric() {
        i += 1;
    }
    let rest = &s[i..];
    let rate = if rest.starts_with(" per ") {
        5
    } else if rest.starts_with('/') {
        1
    } else {
        return i;
    };
    let mut j = i + rate;
    let k = j;
    while j < b.len() && b[j].is_ascii_alphabetic() {
        j += 1;
    }
    if j > k { j } else { i }
}

fn skip_token(b: &[u8], mut i: usize) -> usize {
    while i < b.len()
        && (is_word_byte(b[i])
            || (matches!(b[i], b'-' | b'.') && b.get(i + 1).is_some_and(|c| is_word_byte(*c))))
    {
        i += 1;
    }
    i
}

fn quantity(
    value: f64,
    raw: f64,
    dim: Dim,
    start: usize,
    end: usize,
    decimals: u8,
    scale: f64,
) -> Quantity {
    Quantity {
        value,
        raw,
        dim,
        word: String::new(),
        decimals,
        scale,
        start,
        end,
        fahrenheit: false,
    }
}

/// A date, `yyyymmdd` (`yyyy` 0 when not written), from the number read at `start`.
fn date(value: f64, raw: f64, start: usize, end: usize) -> Quantity {
    quantity(value, raw, Dim::Date, start, end, 0, 1.0)
}

/// A time of day, `minutes` after midnight.
fn clock(minutes: f64, start: usize, end: usize) -> Quantity {
    quantity(minutes, minutes, Dim::Clock, start, end, 0, 1.0)
}

/// The last `n` characters of a text.
pub(crate) fn last_chars(s: &str, n: usize) -> String {
    if n == 0 {
        return String::new();
    }
    let from = s
        .char_indices()
        .rev()
        .nth(n.saturating_sub(1))
        .map_or(0, |(i, _)| i);
    s[from..].to_string()
}

/// `下午`/`晚上`/`pm`-style words before a clock time move it past noon.
fn day_part(before: &str, hours: f64) -> f64 {
    let tail = last_chars(before, 4);
    if hours < 12.0
        && [
            "下午", "晚上", "傍晚", "夜里", "夜间", "夜晚", "晚间", "中午",
        ]
        .iter()
        .any(|w| tail.contains(w))
    {
        if tail.contains("中午") && hours != 12.0 && hours > 3.0 {
            return hours;
        }
        return hours + 12.0;
    }
    hours
}

fn chinese_date_or_clock(s: &str, start: usize, j: usize, raw: f64) -> Option<Quantity> {
    let rest = &s[j..];
    let t = rest.trim_start_matches(' ');
    let at = j + rest.len() - t.len();
    let next_num = |from: &str| -> Option<(f64, usize)> {
        let f = from.trim_start_matches(' ');
        let skip = from.len() - f.len();
        let n: String = f.chars().take_while(char::is_ascii_digit).collect();
        if !n.is_empty() {
            return Some((n.parse().ok()?, skip + n.len()));
        }
        let z: String = f.chars().take_while(|c| ZH_DIGITS.contains(*c)).collect();
        if !z.is_empty() {
            return Some((zh_value(&z)?, skip + z.len()));
        }
        None
    };
    if let Some(after_year) = t.strip_prefix('年')
        && let Some((m, ml)) = next_num(after_year)
        && after_year[ml..].trim_start().starts_with('月')
    {
        let am = after_year[ml..].trim_start_matches(' ');
        let am = &am['月'.len_utf8()..];
        let base = at
            + '年'.len_utf8()
            + ml
            + (after_year[ml..].len() - after_year[ml..].trim_start_matches(' ').len())
            + '月'.len_utf8();
        let (d, end) = match next_num(am) {
            Some((d, dl)) if am[dl..].trim_start().starts_with(['日', '号']) => {
                let pad = am[dl..].len() - am[dl..].trim_start_matches(' ').len();
                (d, base + dl + pad + 3)
            }
            _ => (0.0, base),
        };
        return Some(date(raw * 10000.0 + m * 100.0 + d, raw, start, end));
    }
    if raw <= 12.0
        && let Some(after_month) = t.strip_prefix('月')
        && let Some((d, dl)) = next_num(after_month)
        && after_month[dl..].trim_start().starts_with(['日', '号'])
    {
        let pad = after_month[dl..].len() - after_month[dl..].trim_start_matches(' ').len();
        let end = at + '月'.len_utf8() + dl + pad + 3;
        return Some(date(raw * 100.0 + d, raw, start, end));
    }
    if raw <= 24.0
        && let Some(after_hour) = t.strip_prefix('点').or_else(|| t.strip_prefix('时'))
    {
        let mut end = at + 3;
        let mut minutes = 0.0;
        if after_hour.starts_with('半') {
            minutes = 30.0;
            end += 3;
        } else if let Some((m, ml)) = next_num(after_hour)
            && after_hour[ml..].trim_start().starts_with('分')
        {
            let pad = after_hour[ml..].len() - after_hour[ml..].trim_start_matches(' ').len();
            minutes = m;
            end += ml + pad + 3;
        } else if after_hour.starts_with('钟') {
            end += 3;
        }
        let hours = day_part(&s[..start], raw);
        return Some(clock(hours * 60.0 + minutes, start, end));
    }
    None
}

/// The month a word names: its full name or its abbreviation (`Nov`, `Sept`, `november`).
fn month_at(word: &str) -> Option<f64> {
    const FULL: [&str; 12] = [
        "january",
        "february",
        "march",
        "april",
        "may",
        "june",
        "july",
        "august",
        "september",
        "october",
        "november",
        "december",
    ];
    FULL.iter()
        .position(|m| {
            word.eq_ignore_ascii_case(m)
                || (word.len() == 3 && word.eq_ignore_ascii_case(&m[..3]))
                || word.eq_ignore_ascii_case("sept") && *m == "september"
        })
        .map(|p| p as f64 + 1.0)
}

fn english_date(s: &str, start: usize, j: usize, raw: f64) -> Option<Quantity> {
    // `20 November 2026`
    let rest = &s[j..];
    if raw <= 31.0 {
        let t = rest.strip_prefix(' ').unwrap_or("");
        let word = &t[..t.bytes().take_while(u8::is_ascii_alphabetic).count()];
        if let Some(m) = month_at(word) {
            let after = t[word.len()..]
                .trim_start_matches(['.', ','])
                .trim_start_matches(' ');
            let y: String = after.chars().take_while(char::is_ascii_digit).collect();
            let skip = rest.len() - after.len();
            let (year, end) = if y.len() == 4 {
                (y.parse().unwrap_or(0.0), j + skip + 4)
            } else {
                (0.0, j + 1 + word.len())
            };
            return Some(date(year * 10000.0 + m * 100.0 + raw, raw, start, end));
        }
        // `November 20, 2026`: the month before the number.
        let before = s[..start].trim_end_matches(' ');
        let word = &before[before.len()
            - before
                .bytes()
                .rev()
                .take_while(u8::is_ascii_alphabetic)
                .count()..];
        if before.len() < s[..start].len()
            && let Some(m) = month_at(word)
        {
            let after = rest
                .trim_start_matches([',', ' '])
                .trim_start_matches(|c: char| {
                    c == 's' || c == 't' || c == 'n' || c == 'd' || c == 'r' || c == 'h'
                });
            let after = after.trim_start_matches([',', ' ']);
            let y: String = after.chars().take_while(char::is_ascii_digit).collect();
            let (year, end) = if y.len() == 4 {
                (y.parse().unwrap_or(0.0), s.len() - after.len() + 4)
            } else {
                (0.0, j)
            };
            return Some(date(
                year * 10000.0 + m * 100.0 + raw,
                raw,
                before.len() - word.len(),
                end,
            ));
        }
    }
    None
}

fn scan_chinese(s: &str, start: usize, out: &mut Vec<Quantity>) -> usize {
    let run: String = s[start..]
        .chars()
        .take_while(|c| ZH_DIGITS.contains(*c))
        .collect();
    let j = start + run.len();
    let Some(raw) = zh_value(&run) else {
        return j;
    };
    let before: String = s[..start]
        .chars()
        .rev()
        .take(3)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    // `百分之十五`.
    if before.ends_with("百分之") {
        let from = start - "百分之".len();
        out.push(quantity(raw, raw, Dim::Percent, from, j, 0, 1.0));
        return j;
    }
    // `百分之十五`, `三分之一`: the fraction's marker, read with what follows.
    if s[j..].starts_with("分之") {
        return j;
    }
    // `每百万 token`, `3 美元/百万 token`: a rate's denominator, not a count.
    if before.ends_with('每') || before.trim_end().ends_with('/') {
        return j;
    }
    // Words made of numerals that are not numbers: 一般, 一些, 一下, 十分, 万一, 千万.
    let next = s[j..].chars().next().unwrap_or(' ');
    if run.chars().count() == 1
        && "一两".contains(run.as_str())
        && !matches!(
            next,
            '元' | '块' | '点' | '小' | '天' | '分' | '秒' | '周' | '个' | '年' | '月' | '美'
        )
    {
        return j;
    }
    if let Some(q) = chinese_date_or_clock(s, start, j, raw) {
        // A numeral clock needs a day part or minutes (`一点` alone is "a little").
        let has_minutes = s[j..q.end].contains('分') || s[j..q.end].contains('半');
        let has_part = day_part(&s[..start], 1.0) != 1.0
            || before.contains("早上")
            || before.contains("上午")
            || before.contains("凌晨");
        if q.dim != Dim::Clock || has_minutes || has_part {
            let end = q.end;
            out.push(q);
            return end;
        }
        // `三点四` with no day part and no minutes is a decimal (a version, `3.4`).
        let frac: String = s[j..]
            .strip_prefix('点')
            .map(|rest| {
                rest.chars()
                    .take_while(|c| zh_digit(*c).is_some())
                    .collect()
            })
            .unwrap_or_default();
        let after = &s[j + '点'.len_utf8() + frac.len()..];
        // A chain (`三点四点一`, a version spelled out) is left unread, as before.
        let chained = after
            .strip_prefix('点')
            .is_some_and(|r| r.chars().next().is_some_and(|c| zh_digit(c).is_some()));
        if chained {
            let rest = &s[j..];
            let len = rest
                .char_indices()
                .find(|(_, c)| *c != '点' && zh_digit(*c).is_none())
                .map_or(rest.len(), |(i, _)| i);
            return j + len;
        }
        if !frac.is_empty() && !after.starts_with(['分', '十', '半', '刻']) {
            let digits: String = frac
                .chars()
                .filter_map(zh_digit)
                .filter_map(|d| char::from_digit(d, 10))
                .collect();
            if let Ok(value) = format!("{raw}.{digits}").parse::<f64>() {
                let end = j + '点'.len_utf8() + frac.len();
                let decimals = u8::try_from(digits.len()).unwrap_or(u8::MAX);
                out.push(quantity(
                    value,
                    value,
                    Dim::Plain,
                    start,
                    end,
                    decimals,
                    1.0,
                ));
                return end;
            }
        }
        return j;
    }
    let unit = suffix_unit(&s[j..]);
    match unit {
        Some((len, u)) => {
            let value = if u.fahrenheit {
                (raw - 32.0) * 5.0 / 9.0
            } else {
                raw * u.scale
            };
            let mut q = quantity(value, raw, u.dim, start, j + len, 0, u.scale);
            q.fahrenheit = u.fahrenheit;
            out.push(q);
            j + len
        }
        None => {
            // A count with a measure word (`五十位`), else not read as a number.
            // Small counts in words are discourse ("两个城市", "这三项"), not facts; a count
            // needs its measure word right after it.
            let word: String = s[j..]
                .chars()
                .next()
                .filter(|c| "个位名人家台条份次张件间晚席".contains(*c))
                .map(String::from)
                .unwrap_or_default();
            if !word.is_empty() && raw >= 10.0 {
                let end = j + word.len();
                let mut q = quantity(raw, raw, Dim::Plain, start, end, 0, 1.0);
                q.word = word;
                out.push(q);
                return end;
            }
            j
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fold_copies_runs_and_folds_each_character_as_one_at_a_time_would() {
        // The reference: every character folded and pushed on its own.
        let reference = |s: &str| -> String {
            s.chars()
                .map(|c| {
                    simplified(match c {
                        '\u{FF01}'..='\u{FF5E}' => char::from_u32(c as u32 - 0xFEE0).unwrap_or(c),
                        '\u{3000}' | '\u{00A0}' | '\u{202F}' | '\u{2009}' => ' ',
                        '\u{FFE5}' => '¥',
                        '\u{FFE0}' => '¢',
                        c => crate::text::fold_dash(c),
                    })
                })
                .collect()
        };
        for s in [
            "",
            "plain ASCII 5,000",
            "萬元點數 １２３ＡＢＣ，全角　空格￥５０ — 12–15 ￠",
            "價格為 NT$１，２００元\u{00A0}起；時間 8點05分。義",
            "末尾是繁體字：萬",
            "é ü — ‐ − ok",
            "a long run of ASCII before 萬 and after it, then ＡＢＣ and　more plain text 義",
        ] {
            assert_eq!(fold(s), reference(s), "{s}");
        }
    }

    fn one(s: &str) -> Quantity {
        let f = fold(s);
        let qs = scan(&f);
        assert_eq!(qs.len(), 1, "{s}: {qs:?}");
        qs[0].clone()
    }

    fn same(a: &str, b: &str) -> bool {
        one(a).same_as(&one(b))
    }

    #[test]
    fn one_notation_for_amounts_numbers_and_units() {
        assert!(same("6 USD", "$6"));
        assert!(same("每百万 token 6 美元", "$6 / MTok"));
        assert!(same("6 美金", "$6"));
        assert!(same("1:28 in the afternoon", "13:28"));
        assert!(!same("1:28 in the morning", "13:28"));
        assert!(same("500,000 tokens", "500K tokens"));
        assert!(same("50 万 tokens", "500K"));
        assert!(same("RMB 1,200", "1200 元"));
        assert!(same("三百二十元", "320 元"));
        assert!(same("30000 毫秒", "30 秒"));
        assert!(same("30 seconds", "30000 ms"));
        assert!(same("over 4 hours", "超过 4 小时"));
        assert!(same("8:05 AM", "08:05"));
        assert!(same("上午8点05分", "08:05"));
        assert!(same("晚上10点", "22:00"));
        assert!(same("November 20, 2026", "2026-11-20"));
        assert!(same("2026年11月20日", "2026-11-20"));
        assert!(same("66 °F", "19 °C"));
        assert!(same("百分之十五", "15%"));
        assert!(same("１２００元", "1200 元"));
        assert!(!same("$6", "6 元"));
        assert!(!same("$30", "$3"));
        assert!(!same("8:05", "8"));
    }

    #[test]
    fn both_bounds_of_a_range_take_its_unit() {
        for (text, dim) in [
            ("retry in 15-30 minutes", Dim::Duration),
            ("3–5 business days", Dim::Duration),
            ("10~20 元", Dim::Money(Currency::Yuan)),
        ] {
            let qs = scan(&fold(text));
            assert_eq!(qs.len(), 2, "{text}: {qs:?}");
            assert!(qs.iter().all(|q| q.dim == dim), "{text}: {qs:?}");
        }
        let qs = scan("15-30 minutes");
        assert_eq!((qs[0].value, qs[1].value), (900.0, 1800.0));
    }

    #[test]
    fn never_panics_on_any_cut_of_mixed_text() {
        let text = "¥12 US$3 NT$500 2026年11月20日 11月2日 上午8点05分 下午一点半 三百二十元 百分之十五 \
            8:05 pm 13:28 2026-11-20 Nov 20, 2026 20 November 2026 5 小时 23 分钟 1.5% 500K 50 万 \
            30000ms G102 v3.4.1 一般 两 刀 ℃ 66°F $6 / MTok 1,200 元 超过4小时 第3 1. 12、";
        for (i, _) in text.char_indices() {
            for (j, _) in text[i..].char_indices() {
                let _ = scan(&fold(&text[i..i + j]));
            }
            let _ = scan(&fold(&text[i..]));
        }
    }

    #[test]
    fn numbers_inside_tokens_are_not_quantities() {
        for s in [
            "G102",
            "atlas-medium-2",
            "v3.4.1",
            "CR400BF",
            "x86_64",
            "3.4.1",
            "A12",
        ] {
            assert!(scan(&fold(s)).is_empty(), "{s}");
        }
        assert!(scan(&fold("一般来说一些")).is_empty());
        assert_eq!(one("5 小时 23 分钟").value, 5.0 * 3600.0 + 23.0 * 60.0);
    }
}
