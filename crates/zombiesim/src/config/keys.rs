//! Dotted keys over the configuration's TOML table: reading and setting a key
//! (`lookup`, `set_dotted`), reading a `--set` value (`parse_value`), the "unknown key
//! (did you mean …)" error (`unknown_key`, `edit_distance`), the field serde names as
//! unknown, and the line of a document that sets a key (`key_line`).

use crate::error::{Error, Result};

/// The line (from 1) where a dotted key is set in a TOML document, if it can be found:
/// the first `field = ...` line inside the key's `[section]`.
pub(super) fn key_line(text: &str, key: &str) -> Option<usize> {
    let (section, field) = match key.rsplit_once('.') {
        Some((s, f)) => (s, f),
        None => ("", key),
    };
    let mut current = String::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            current = name.trim().to_string();
            continue;
        }
        let Some((k, _)) = line.split_once('=') else {
            continue;
        };
        let k = k.trim().trim_matches('"');
        let full = if current.is_empty() {
            k.to_string()
        } else {
            format!("{current}.{k}")
        };
        if (current == section && k == field) || full == key {
            return Some(i + 1);
        }
    }
    None
}

pub(super) fn unknown_field_name(msg: &str) -> Option<String> {
    let rest = msg.strip_prefix("unknown field `")?;
    Some(rest.split('`').next()?.to_string())
}

pub(super) fn parse_value(text: &str) -> toml::Value {
    let doc = format!("v = {text}");
    match doc.parse::<toml::Table>() {
        Ok(mut t) => t
            .remove("v")
            .unwrap_or(toml::Value::String(text.to_string())),
        Err(_) => toml::Value::String(text.trim().to_string()),
    }
}

pub(super) fn unknown_key(root: &toml::Table, key: &str) -> Error {
    let hint = match closest_key(root, key) {
        Some(k) => format!("unknown key (did you mean `{k}`?)"),
        None => "unknown key (`zombiesim run --print-config` lists every key)".to_string(),
    };
    Error::config(key, hint)
}

/// The key or section of `root` nearest to `key` (within 3 edits), for "did you mean".
pub(super) fn closest_key(root: &toml::Table, key: &str) -> Option<String> {
    let mut known = Vec::new();
    collect_keys(root, "", &mut known);
    known
        .into_iter()
        .map(|k| (edit_distance(&k, key), k))
        .filter(|(d, _)| *d <= 3)
        .min_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.cmp(&b.1)))
        .map(|(_, k)| k)
}

/// Every dotted key of `t`, sections included (a misspelt `[section]` has a match too).
fn collect_keys(t: &toml::Table, prefix: &str, out: &mut Vec<String>) {
    for (k, v) in t {
        let path = if prefix.is_empty() {
            k.clone()
        } else {
            format!("{prefix}.{k}")
        };
        if let toml::Value::Table(inner) = v {
            collect_keys(inner, &path, out);
        }
        out.push(path);
    }
}

/// The value at a dotted key.
pub(super) fn lookup<'a>(root: &'a toml::Table, key: &str) -> Option<&'a toml::Value> {
    let mut parts = key.split('.');
    let mut cur = root.get(parts.next()?)?;
    for part in parts {
        cur = cur.as_table()?.get(part)?;
    }
    Some(cur)
}

pub(super) fn set_dotted(root: &mut toml::Table, key: &str, value: toml::Value) -> Result<()> {
    match lookup(root, key) {
        None => return Err(unknown_key(root, key)),
        Some(toml::Value::Table(_)) => {
            return Err(Error::config(key, "is a section; name one of its keys"))
        }
        Some(_) => {}
    }
    let (sections, field) = key.rsplit_once('.').unwrap_or(("", key));
    let mut table = root;
    for part in sections.split('.').filter(|p| !p.is_empty()) {
        table = table
            .get_mut(part)
            .and_then(toml::Value::as_table_mut)
            .expect("lookup found the key");
    }
    table.insert(field.to_string(), value);
    Ok(())
}

/// Levenshtein distance, for "did you mean" hints.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != *cb);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}
