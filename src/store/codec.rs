//! How a trajectory is stored (store schema v2): the episode's JSON with every long string
//! interned in the `strings` table, compressed with zstd, using a dictionary trained on the
//! suite's first episodes once there is one.
//!
//! Why both: the redundancy of a run is across episodes, not within one. The same system
//! prompt, tool specs, task prompt and observations recur in thousands of episodes (interning
//! stores each once); what remains is JSON structure and short texts that repeat in shape
//! (the dictionary). Measured on the demo's 68,213 episodes: 5,619 bytes of JSON each;
//! zstd alone 1,864; interned + zstd 926 (+74 of strings); interned + dictionary 245 (+74).
//!
//! A reference is the string [`REF`] followed by the decimal id of its row in `strings`; a
//! stored string that itself starts with [`REF`] gets one more in front. Object keys are never
//! interned.

use std::collections::HashMap;
use std::io::Read;
use std::sync::{Arc, Mutex};

use serde_json::Value;

/// `codec` of a row written by store schema v1 and not converted: the JSON text as bytes.
pub(crate) const CODEC_JSON: i64 = 0;
/// `codec` of a row written by v2: interned JSON, zstd-compressed (with `dictionary` if set).
pub(crate) const CODEC_PACKED: i64 = 1;

/// Strings of at least this many bytes are interned (shorter ones cost more as references).
pub(crate) const INTERN_MIN_BYTES: usize = 48;
/// Marks a reference; DEL, which JSON writes as one byte and texts hardly ever start with.
const REF: char = '\u{7f}';
/// A suite's dictionary is trained on its first this many episodes written by a process.
pub(crate) const DICTIONARY_SAMPLES: usize = 500;
/// Maximum size of a trained dictionary.
const DICTIONARY_BYTES: usize = 64 * 1024;
/// zstd level: 3 is zstd's default; 9 saved 15 % more on the demo at several times the time.
const LEVEL: i32 = 3;
/// Interned strings kept in memory for reading before the cache is emptied.
const STRING_CACHE_ENTRIES: usize = 200_000;
/// Hashes of interned strings kept in memory for writing before the cache is emptied (about
/// 40 bytes each).
const INTERNED_CACHE_ENTRIES: usize = 2_000_000;

/// The long strings of `value`, each once, in the order first met.
pub(crate) fn long_strings(value: &Value) -> Vec<&str> {
    fn walk<'a>(v: &'a Value, seen: &mut std::collections::HashSet<&'a str>, out: &mut Vec<&'a str>) {
        match v {
            Value::String(s) if s.len() >= INTERN_MIN_BYTES && seen.insert(s.as_str()) => out.push(s.as_str()),
            Value::Array(a) => a.iter().for_each(|x| walk(x, seen, out)),
            Value::Object(o) => o.values().for_each(|x| walk(x, seen, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(value, &mut Default::default(), &mut out);
    out
}

/// Replace the strings `ids` names by references, and escape other strings that start with
/// [`REF`]. A long string missing from `ids` stays inline.
pub(crate) fn intern(value: &mut Value, ids: &HashMap<String, i64>) {
    match value {
        Value::String(s) => {
            if let Some(id) = ids.get(s.as_str()) {
                *s = format!("{REF}{id}");
            } else if s.starts_with(REF) {
                s.insert(0, REF);
            }
        }
        Value::Array(a) => a.iter_mut().for_each(|x| intern(x, ids)),
        Value::Object(o) => o.values_mut().for_each(|x| intern(x, ids)),
        _ => {}
    }
}

/// A string of stored JSON: a reference to an interned string, or text.
enum Stored<'a> {
    Ref(i64),
    Text(&'a str),
}

fn classify(s: &str) -> Result<Stored<'_>, String> {
    match s.strip_prefix(REF) {
        None => Ok(Stored::Text(s)),
        Some(rest) if rest.starts_with(REF) => Ok(Stored::Text(rest)),
        Some(rest) => rest.parse().map(Stored::Ref).map_err(|_| format!("malformed string reference {s:?}")),
    }
}

/// The ids of the interned strings `value` references.
pub(crate) fn references(value: &Value, out: &mut Vec<i64>) -> Result<(), String> {
    match value {
        Value::String(s) => {
            if let Stored::Ref(id) = classify(s)? {
                out.push(id);
            }
        }
        Value::Array(a) => a.iter().try_for_each(|x| references(x, out))?,
        Value::Object(o) => o.values().try_for_each(|x| references(x, out))?,
        _ => {}
    }
    Ok(())
}

/// Put the interned strings back (and unescape the others).
pub(crate) fn resolve(value: &mut Value, strings: &HashMap<i64, Arc<str>>) -> Result<(), String> {
    match value {
        Value::String(s) => match classify(s)? {
            Stored::Ref(id) => *s = strings.get(&id).ok_or_else(|| format!("interned string {id} is missing"))?.to_string(),
            Stored::Text(t) if t.len() != s.len() => *s = t.to_string(),
            Stored::Text(_) => {}
        },
        Value::Array(a) => a.iter_mut().try_for_each(|x| resolve(x, strings))?,
        Value::Object(o) => o.values_mut().try_for_each(|x| resolve(x, strings))?,
        _ => {}
    }
    Ok(())
}

/// The content hash a string is interned under.
pub(crate) fn string_hash(s: &str) -> i64 {
    // same bits as the u64; the column is a signed 64-bit integer
    crate::seed::hash_str(s) as i64
}

/// A trained dictionary, prepared for both directions.
pub(crate) struct Dictionary {
    encoder: zstd::dict::EncoderDictionary<'static>,
    decoder: zstd::dict::DecoderDictionary<'static>,
}

impl Dictionary {
    pub(crate) fn new(bytes: &[u8]) -> Dictionary {
        Dictionary { encoder: zstd::dict::EncoderDictionary::copy(bytes, LEVEL), decoder: zstd::dict::DecoderDictionary::copy(bytes) }
    }
}

/// Train a dictionary on sample payloads.
pub(crate) fn train(samples: &[Vec<u8>]) -> std::io::Result<Vec<u8>> {
    zstd::dict::from_samples(samples, DICTIONARY_BYTES)
}

/// Compress a payload, with the dictionary if there is one.
pub(crate) fn compress(payload: &[u8], dictionary: Option<&Dictionary>) -> std::io::Result<Vec<u8>> {
    match dictionary {
        Some(d) => zstd::bulk::Compressor::with_prepared_dictionary(&d.encoder)?.compress(payload),
        None => zstd::bulk::compress(payload, LEVEL),
    }
}

/// Decompress a payload written by [`compress`].
pub(crate) fn decompress(blob: &[u8], dictionary: Option<&Dictionary>) -> std::io::Result<Vec<u8>> {
    let mut out = Vec::with_capacity(blob.len() * 8);
    match dictionary {
        Some(d) => zstd::stream::read::Decoder::with_prepared_dictionary(blob, &d.decoder)?.read_to_end(&mut out)?,
        None => zstd::stream::read::Decoder::with_buffer(blob)?.read_to_end(&mut out)?,
    };
    Ok(out)
}

/// Where a suite's dictionary stands in this process.
pub(crate) enum SuiteDictionary {
    /// Payloads kept until there are enough to train on.
    Collecting(Vec<Vec<u8>>),
    /// Being trained by one writer; the others write without a dictionary meanwhile.
    Training,
    Ready(i64),
    /// Training failed (too few distinct payloads): written without one.
    Unavailable,
}

/// The codec's per-store memory: interned strings known to be stored, strings read, and
/// dictionaries.
#[derive(Default)]
pub(crate) struct CodecCache {
    /// Content hash → (id, a second hash of the content) of strings known to be in `strings`.
    pub(crate) interned: Mutex<HashMap<i64, (i64, u64)>>,
    /// Id → content of strings read back.
    pub(crate) strings: Mutex<HashMap<i64, Arc<str>>>,
    pub(crate) dictionaries: Mutex<HashMap<i64, Arc<Dictionary>>>,
    pub(crate) suites: Mutex<HashMap<String, SuiteDictionary>>,
}

impl CodecCache {
    /// Remember that string `id` holds the content with these hashes.
    pub(crate) fn remember_interned(&self, hash: i64, id: i64, check: u64) {
        let mut cache = self.interned.lock().unwrap_or_else(|e| e.into_inner());
        if cache.len() > INTERNED_CACHE_ENTRIES {
            cache.clear();
        }
        cache.insert(hash, (id, check));
    }

    /// Remember strings read back, emptying the cache first when it is full.
    pub(crate) fn remember_strings(&self, read: impl IntoIterator<Item = (i64, Arc<str>)>) {
        let mut cache = self.strings.lock().unwrap_or_else(|e| e.into_inner());
        if cache.len() > STRING_CACHE_ENTRIES {
            cache.clear();
        }
        cache.extend(read);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn interning_round_trips_long_strings_and_texts_that_look_like_references() {
        let long = "x".repeat(INTERN_MIN_BYTES);
        let tricky = format!("{REF}12 is not a reference {long}");
        let short_tricky = format!("{REF}7");
        let mut v = json!({"a": long, "b": [tricky, short_tricky, "short"], long.clone(): 1});
        let original = v.clone();
        let found: Vec<String> = long_strings(&v).into_iter().map(String::from).collect();
        assert_eq!(found, vec![long.clone(), tricky.clone()]);
        // the tricky one is not interned (as when its hash collides): it must be escaped
        let ids = HashMap::from([(long.clone(), 5)]);
        intern(&mut v, &ids);
        assert_eq!(v["a"], json!(format!("{REF}5")));
        let mut refs = Vec::new();
        references(&v, &mut refs).unwrap();
        assert_eq!(refs, vec![5]);
        resolve(&mut v, &HashMap::from([(5, Arc::from(long.as_str()))])).unwrap();
        assert_eq!(v, original);
        let mut missing = json!(format!("{REF}9"));
        assert!(resolve(&mut missing, &HashMap::new()).unwrap_err().contains("9 is missing"));
    }

    #[test]
    fn compresses_with_and_without_a_dictionary() {
        let samples: Vec<Vec<u8>> =
            (0..200).map(|i| format!("{{\"task\":\"t-{i}\",\"steps\":[{{\"sql\":\"SELECT * FROM t{i}\",\"ok\":true}}]}}").into_bytes()).collect();
        let dict = Dictionary::new(&train(&samples).unwrap());
        for d in [None, Some(&dict)] {
            let blob = compress(&samples[7], d).unwrap();
            assert_eq!(decompress(&blob, d).unwrap(), samples[7]);
        }
    }
}
