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
/// A suite's dictionary is trained on its first this many episodes written by a process
/// (measured on the demo: 200 make as good a dictionary as 500 or 2,000; 100 do not).
pub(crate) const DICTIONARY_SAMPLES: usize = 200;
/// Maximum size of a trained dictionary.
const DICTIONARY_BYTES: usize = 64 * 1024;
/// zstd level: 3 is zstd's default; 9 saved 15 % more on the demo at several times the time.
const LEVEL: i32 = 3;
/// The largest payload [`decompress`] accepts.
const MAX_PAYLOAD_BYTES: u64 = 1 << 30;
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
pub(crate) enum Stored<'a> {
    Ref(i64),
    Text(&'a str),
}

/// A stored payload that does not read back: a bad reference, or one to a string that is gone.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub(crate) enum InternError {
    #[error("malformed string reference {0:?}")]
    Malformed(String),
    #[error("interned string {0} is missing")]
    Missing(i64),
}

pub(crate) fn classify(s: &str) -> Result<Stored<'_>, InternError> {
    match s.strip_prefix(REF) {
        None => Ok(Stored::Text(s)),
        Some(rest) if rest.starts_with(REF) => Ok(Stored::Text(rest)),
        Some(rest) => rest.parse().map(Stored::Ref).map_err(|_| InternError::Malformed(s.to_string())),
    }
}

/// The ids of the interned strings `value` references (readers take them from the payload's
/// bytes: [`payload_references`]).
#[cfg(test)]
pub(crate) fn references(value: &Value, out: &mut Vec<i64>) -> Result<(), InternError> {
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

/// The ids a packed payload (the interned JSON, decompressed) references, read from its bytes
/// without parsing it: a reference is the only string value that opens with [`REF`] followed by
/// a digit (a text that starts with [`REF`] is written with two).
pub(crate) fn payload_references(payload: &[u8]) -> impl Iterator<Item = i64> + '_ {
    // a quote, then REF (one byte in UTF-8)
    const MARKER: &[u8] = &[b'"', REF as u8];
    memchr::memmem::find_iter(payload, MARKER).filter_map(move |at| {
        let digits = &payload[at + 2..];
        let n = digits.iter().take_while(|b| b.is_ascii_digit()).count();
        (n > 0 && digits.get(n) == Some(&b'"')).then(|| std::str::from_utf8(&digits[..n]).ok()?.parse().ok()).flatten()
    })
}

/// Put the interned strings back (and unescape the others) in a parsed tree: what
/// [`super::resolve::from_payload`] does while parsing.
#[cfg(test)]
pub(crate) fn resolve(value: &mut Value, strings: &HashMap<i64, Arc<str>>) -> Result<(), InternError> {
    match value {
        Value::String(s) => match classify(s)? {
            Stored::Ref(id) => *s = strings.get(&id).ok_or(InternError::Missing(id))?.to_string(),
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
    let mut out = Vec::with_capacity(zstd::zstd_safe::compress_bound(payload.len()));
    // as for decompression: a context per thread, not per call
    thread_local! {
        static CONTEXT: std::cell::RefCell<zstd::zstd_safe::CCtx<'static>> = std::cell::RefCell::new(zstd::zstd_safe::CCtx::create());
    }
    let done = CONTEXT.with(|c| {
        let mut c = c.borrow_mut();
        match dictionary {
            Some(d) => c.compress_using_cdict(&mut out, payload, d.encoder.as_cdict()),
            None => c.compress(&mut out, payload, LEVEL),
        }
    });
    done.map(|_| out).map_err(|code| std::io::Error::other(zstd::zstd_safe::get_error_name(code)))
}

/// Decompress a payload written by [`compress`].
pub(crate) fn decompress(blob: &[u8], dictionary: Option<&Dictionary>) -> std::io::Result<Vec<u8>> {
    let bad = |what: &str| std::io::Error::new(std::io::ErrorKind::InvalidData, what.to_string());
    let size = match zstd::zstd_safe::get_frame_content_size(blob) {
        Ok(Some(size)) if size <= MAX_PAYLOAD_BYTES => size as usize,
        Ok(Some(_)) => return Err(bad("a trajectory larger than 1 GiB")),
        Ok(None) | Err(_) => return Err(bad("not a zstd frame with its content size")),
    };
    let mut out = Vec::with_capacity(size);
    // a decompression context is costly to create (half of a search's time): one per thread
    thread_local! {
        static CONTEXT: std::cell::RefCell<zstd::zstd_safe::DCtx<'static>> = std::cell::RefCell::new(zstd::zstd_safe::DCtx::create());
    }
    let done = CONTEXT.with(|c| {
        let mut c = c.borrow_mut();
        match dictionary {
            Some(d) => c.decompress_using_ddict(&mut out, blob, d.decoder.as_ddict()),
            None => c.decompress(&mut out, blob),
        }
    });
    match done {
        Ok(n) if n == size => Ok(out),
        Ok(_) => Err(bad("a trajectory shorter than its frame says")),
        Err(code) => Err(bad(zstd::zstd_safe::get_error_name(code))),
    }
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
    /// Content hashes of long strings written once, inline: a string is interned when it comes
    /// again (a text that never repeats — a task's prompt tried once, an observation — costs
    /// less compressed inside its episode than as a row of its own).
    pub(crate) seen: Mutex<std::collections::HashSet<i64>>,
    /// Id → content of strings read back.
    pub(crate) strings: Mutex<HashMap<i64, Arc<str>>>,
    pub(crate) dictionaries: Mutex<HashMap<i64, Arc<Dictionary>>>,
    pub(crate) suites: Mutex<HashMap<String, SuiteDictionary>>,
}

impl CodecCache {
    /// Whether a long string with this hash was seen before (and remember that it was).
    pub(crate) fn seen_before(&self, hash: i64) -> bool {
        let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        if seen.len() > INTERNED_CACHE_ENTRIES {
            seen.clear();
        }
        !seen.insert(hash)
    }

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
        let payload = serde_json::to_vec(&v).unwrap();
        assert_eq!(payload_references(&payload).collect::<Vec<_>>(), vec![5]);
        resolve(&mut v, &HashMap::from([(5, Arc::from(long.as_str()))])).unwrap();
        assert_eq!(v, original);
        let mut missing = json!(format!("{REF}9"));
        assert_eq!(resolve(&mut missing, &HashMap::new()).unwrap_err(), InternError::Missing(9));
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
