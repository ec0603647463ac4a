//! Just enough of a Rust reader for the architecture checks: code with comments and
//! literals blanked, `use` declarations and paths (`a::b::{c, d as e}`) as their
//! leaves, inline modules, and `#[cfg(test)]` modules set apart. It reads this
//! crate's own sources, not Rust at large (no macros expanded, no name resolution
//! beyond what the checks do with the paths).

pub(crate) fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// Rust source with its comments, string and character literals (and any non-ASCII
/// byte) blanked: every other byte stays where it was, so offsets and lines hold.
pub(crate) fn code_only(text: &str) -> String {
    let b = text.as_bytes();
    let n = b.len();
    let mut out = b.to_vec();
    let blank = |out: &mut Vec<u8>, from: usize, to: usize| {
        for c in &mut out[from..to.min(n)] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
    };
    let mut i = 0;
    while i < n {
        let c = b[i];
        if b[i..].starts_with(b"//") {
            let end = b[i..].iter().position(|&c| c == b'\n').map_or(n, |p| i + p);
            blank(&mut out, i, end);
            i = end;
        } else if b[i..].starts_with(b"/*") {
            let (mut depth, mut j) = (0, i);
            while j < n {
                if b[j..].starts_with(b"/*") {
                    depth += 1;
                    j += 2;
                } else if b[j..].starts_with(b"*/") {
                    depth -= 1;
                    j += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    j += 1;
                }
            }
            blank(&mut out, i, j);
            i = j;
        } else if c == b'r'
            && (i == 0
                || !is_ident(b[i - 1])
                || (b[i - 1] == b'b' && (i < 2 || !is_ident(b[i - 2]))))
            && {
                let h = b[i + 1..].iter().take_while(|&&c| c == b'#').count();
                b.get(i + 1 + h) == Some(&b'"')
            }
        {
            // A raw string: r"…", r#"…"#, br"…".
            let hashes = b[i + 1..].iter().take_while(|&&c| c == b'#').count();
            let close = format!("\"{}", "#".repeat(hashes)).into_bytes();
            let body = i + 2 + hashes;
            let end = b[body..]
                .windows(close.len())
                .position(|w| w == close.as_slice())
                .map_or(n, |p| body + p + close.len());
            blank(&mut out, i, end);
            i = end;
        } else if c == b'"' {
            let mut j = i + 1;
            while j < n && b[j] != b'"' {
                j += if b[j] == b'\\' { 2 } else { 1 };
            }
            blank(&mut out, i, j + 1);
            i = j + 1;
        } else if c == b'\'' {
            // A character literal ('x', '\n', '\'', '\u{..}'), or a lifetime or label.
            let end = if b.get(i + 1) == Some(&b'\\') {
                b[i + 3..]
                    .iter()
                    .position(|&c| c == b'\'')
                    .map(|p| i + 3 + p + 1)
            } else {
                let len = match b.get(i + 1) {
                    Some(&c) if c >= 0xF0 => 4,
                    Some(&c) if c >= 0xE0 => 3,
                    Some(&c) if c >= 0xC0 => 2,
                    _ => 1,
                };
                (b.get(i + 1 + len) == Some(&b'\'')).then_some(i + 2 + len)
            };
            match end {
                Some(end) => {
                    blank(&mut out, i, end);
                    i = end;
                }
                None => i += 1,
            }
        } else {
            i += 1;
        }
    }
    for c in &mut out {
        if !c.is_ascii() {
            *c = b' ';
        }
    }
    String::from_utf8(out).expect("ASCII")
}

pub(crate) fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && b[i].is_ascii_whitespace() {
        i += 1;
    }
    i
}

pub(crate) fn ident_at(b: &[u8], i: usize) -> Option<&str> {
    let len = b[i.min(b.len())..]
        .iter()
        .take_while(|&&c| is_ident(c))
        .count();
    (len > 0 && !b[i].is_ascii_digit()).then(|| std::str::from_utf8(&b[i..i + len]).expect("ASCII"))
}

/// Whether a word starts at `i` (not in the middle of an identifier or a path).
pub(crate) fn word_starts(b: &[u8], i: usize) -> bool {
    i == 0 || !(is_ident(b[i - 1]) || b[i - 1] == b':' || b[i - 1] == b'.')
}

/// The matching `}` of the `{` at `open`.
pub(crate) fn closing(b: &[u8], open: usize) -> usize {
    let mut depth = 0;
    for (j, &c) in b.iter().enumerate().skip(open) {
        match c {
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return j;
                }
            }
            _ => {}
        }
    }
    b.len()
}

/// One path a use tree or an expression names: its segments, and the name it is
/// known by where it is written (its `as` alias, or its last segment).
#[derive(Clone, Debug)]
pub(crate) struct Leaf {
    pub(crate) segs: Vec<String>,
    pub(crate) name: String,
}

/// The path starting at `i` (`a::b::c`, `a::{b, c::d as e}`, `a::*`), as its leaves,
/// and where it ends.
pub(crate) fn path_at(b: &[u8], i: usize) -> (Vec<Leaf>, usize) {
    let mut segs: Vec<String> = Vec::new();
    let mut j = i;
    if let Some(id) = ident_at(b, j) {
        segs.push(id.to_string());
        j += id.len();
    }
    loop {
        let k = skip_ws(b, j);
        if !b[k..].starts_with(b"::") {
            break;
        }
        let k = skip_ws(b, k + 2);
        if b.get(k) == Some(&b'*') {
            segs.push("*".into());
            j = k + 1;
            break;
        }
        if b.get(k) == Some(&b'{') {
            let end = closing(b, k);
            let mut leaves = Vec::new();
            let mut at = skip_ws(b, k + 1);
            while at < end {
                let (inner, after) = path_at(b, at);
                for mut l in inner {
                    let mut full = segs.clone();
                    full.append(&mut l.segs);
                    leaves.push(Leaf {
                        name: if l.name == "self" {
                            full[full.len() - 2].clone()
                        } else {
                            l.name
                        },
                        segs: full,
                    });
                }
                let next = b
                    .get(after..end)
                    .and_then(|rest| rest.iter().position(|&c| c == b','));
                at = match next {
                    Some(p) => skip_ws(b, after + p + 1),
                    None => end,
                };
            }
            for l in &mut leaves {
                if l.segs.last().is_some_and(|s| s == "self") {
                    l.segs.pop();
                }
            }
            return (leaves, end + 1);
        }
        match ident_at(b, k) {
            Some(id) => {
                segs.push(id.to_string());
                j = k + id.len();
            }
            None => break,
        }
    }
    let mut name = segs.last().cloned().unwrap_or_default();
    let k = skip_ws(b, j);
    if b[k..].starts_with(b"as") && !is_ident(*b.get(k + 2).unwrap_or(&b' ')) {
        let a = skip_ws(b, k + 2);
        if let Some(alias) = ident_at(b, a) {
            name = alias.to_string();
            j = a + alias.len();
        }
    }
    (vec![Leaf { segs, name }], j)
}

/// A `use` declaration: where it is, whether it is `pub` (any visibility), its leaves.
pub(crate) struct UseDecl {
    pub(crate) span: (usize, usize),
    pub(crate) public: bool,
    pub(crate) leaves: Vec<Leaf>,
}

pub(crate) fn use_decls(code: &str) -> Vec<UseDecl> {
    let b = code.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(p) = code[i..].find("use") {
        let at = i + p;
        i = at + 3;
        if !word_starts(b, at) || !b.get(at + 3).is_some_and(|c| c.is_ascii_whitespace()) {
            continue;
        }
        let mut start = skip_ws(b, at + 3);
        if b[start..].starts_with(b"::") {
            start += 2;
        }
        let (leaves, end) = path_at(b, start);
        let end = end.min(code.len());
        // `pub use`, `pub(crate) use`, `pub(super) use`, `pub(in …) use`.
        let before = code[..at].trim_end();
        let before = match before.strip_suffix(')') {
            Some(rest) => rest.rfind('(').map_or(before, |q| rest[..q].trim_end()),
            None => before,
        };
        let public = before.ends_with("pub")
            && !before[..before.len() - 3]
                .bytes()
                .last()
                .is_some_and(is_ident);
        let end = code[end..].find(';').map_or(code.len(), |q| end + q + 1);
        out.push(UseDecl {
            span: (at, end),
            public,
            leaves,
        });
        i = end;
    }
    out
}

/// Blank the `#[cfg(test)] mod name { … }` blocks of `code`; the names of the
/// `#[cfg(test)] mod name;` declarations.
pub(crate) fn without_test_modules(code: &str) -> (String, Vec<String>) {
    let b = code.as_bytes();
    let mut out = b.to_vec();
    let mut test_files = Vec::new();
    let mut i = 0;
    while let Some(p) = code[i..].find("#[cfg(test)]") {
        let attr = i + p;
        let mut j = skip_ws(b, attr + "#[cfg(test)]".len());
        while b.get(j) == Some(&b'#') {
            j = b[j..]
                .iter()
                .position(|&c| c == b']')
                .map_or(b.len(), |q| j + q + 1);
            j = skip_ws(b, j);
        }
        if b[j..].starts_with(b"pub") {
            j = skip_ws(b, j + 3);
            if b.get(j) == Some(&b'(') {
                j = skip_ws(
                    b,
                    b[j..]
                        .iter()
                        .position(|&c| c == b')')
                        .map_or(j, |q| j + q + 1),
                );
            }
        }
        i = j;
        if !b[j..].starts_with(b"mod ") {
            continue;
        }
        let k = skip_ws(b, j + 3);
        let Some(name) = ident_at(b, k) else { continue };
        let k = skip_ws(b, k + name.len());
        match b.get(k) {
            Some(b';') => test_files.push(name.to_string()),
            Some(b'{') => {
                let end = closing(b, k);
                for c in &mut out[attr..=end.min(b.len() - 1)] {
                    if *c != b'\n' {
                        *c = b' ';
                    }
                }
                i = end;
            }
            _ => {}
        }
    }
    (String::from_utf8(out).expect("ASCII"), test_files)
}

/// The inline modules (`mod name { … }`) of `code`: their spans and names.
pub(crate) fn inline_modules(code: &str) -> Vec<(usize, usize, String)> {
    let b = code.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(p) = code[i..].find("mod") {
        let at = i + p;
        i = at + 3;
        if !word_starts(b, at) || !b.get(at + 3).is_some_and(|c| c.is_ascii_whitespace()) {
            continue;
        }
        let k = skip_ws(b, at + 3);
        let Some(name) = ident_at(b, k) else { continue };
        let k = skip_ws(b, k + name.len());
        if b.get(k) == Some(&b'{') {
            out.push((k, closing(b, k), name.to_string()));
        }
    }
    out
}

pub(crate) fn line_of(text: &str, at: usize) -> usize {
    text[..at].bytes().filter(|&c| c == b'\n').count() + 1
}

#[test]
fn code_only_blanks_comments_and_literals_and_keeps_the_code() {
    let text = "fn f<'a>(x: &'a str) -> char { let c = '{'; let e = '\\''; \
                let r = r#\"super::a }\"#; /* super::b { /* nested */ */ g(c, \"}\", e) } \
                // super::c {";
    let code = code_only(text);
    assert_eq!(code.len(), text.len());
    assert!(
        code.starts_with("fn f<'a>(x: &'a str) -> char { let c ="),
        "{code}"
    );
    assert!(
        !code.contains("super") && !code.contains("nested"),
        "{code}"
    );
    assert_eq!(code.matches('{').count(), 1, "{code}");
    assert_eq!(code.matches('}').count(), 1, "{code}");
}

#[test]
fn use_trees_become_their_leaves() {
    let code = "pub(crate) use super::{a::{B, C as D}, self, e::*};\nuse x;";
    let decls = use_decls(code);
    assert_eq!(decls.len(), 2);
    assert!(decls[0].public && !decls[1].public);
    let leaves: Vec<(String, String)> = decls[0]
        .leaves
        .iter()
        .map(|l| (l.segs.join("::"), l.name.clone()))
        .collect();
    let pair = |p: &str, n: &str| (p.to_string(), n.to_string());
    assert_eq!(
        leaves,
        vec![
            pair("super::a::B", "B"),
            pair("super::a::C", "D"),
            pair("super", "super"),
            pair("super::e::*", "*"),
        ]
    );
}
