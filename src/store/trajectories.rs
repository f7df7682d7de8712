//! Writing and reading trajectories in their stored form ([`codec`]): interning strings,
//! training and loading dictionaries, decoding rows for readers, searching their text, and
//! converting rows a v1 store left as JSON (`harness-s store compact`).

use std::collections::HashMap;
use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde_json::Value;

use super::codec::{self, Dictionary, SuiteDictionary, CODEC_JSON, CODEC_PACKED};
use super::resolve;
use super::sql::{args, now_utc, Conditions};
use super::{on_backend, Backend, Store, StoreError};

/// The columns of a stored trajectory, in this order: see [`StoredTrajectory`].
pub(crate) const TRAJECTORY_COLUMNS: &str = "id, codec, dictionary, trajectory";

/// A trajectory as a row holds it.
#[derive(sqlx::FromRow)]
pub(crate) struct StoredTrajectory {
    pub id: i64,
    pub codec: i64,
    pub dictionary: Option<i64>,
    pub trajectory: Vec<u8>,
}

/// A trajectory ready to be written.
pub(crate) struct Encoded {
    pub codec: i64,
    pub dictionary: Option<i64>,
    pub blob: Vec<u8>,
}

/// Strings read back by id, at most this many per statement.
const STRINGS_PER_QUERY: usize = 500;
/// Rows of v1 JSON converted per transaction by [`Store::compact`].
const COMPACT_BATCH: i64 = 500;

/// A second hash of a cached string, so that two strings whose content hashes collide are never
/// taken for one another without reading the database (FNV-1a over the bytes backwards, from
/// another basis).
fn check_hash(s: &str) -> u64 {
    crate::seed::fnv1a_update(0x84222325cbf29ce4 ^ s.len() as u64, s.bytes().rev())
}

impl Store {
    /// The stored form of an episode's JSON value (of suite `suite`).
    pub(crate) async fn encode_trajectory(&self, op: &str, suite: &str, mut value: Value) -> Result<Encoded, StoreError> {
        let ids = self.intern_strings(op, &value).await?;
        codec::intern(&mut value, &ids);
        let payload = serde_json::to_vec(&value).map_err(|e| self.json_error(op, e))?;
        let dictionary = self.dictionary_for(op, suite, &payload).await?;
        let blob = codec::compress(&payload, dictionary.as_ref().map(|(_, d)| &**d)).map_err(|e| self.codec_error(op, e))?;
        Ok(Encoded { codec: CODEC_PACKED, dictionary: dictionary.map(|(id, _)| id), blob })
    }

    /// The ids of the long strings of `value` in `strings`, inserting those not there yet. A
    /// string met for the first time, and one whose hash is taken by another text, are left
    /// out (they stay inline).
    async fn intern_strings(&self, op: &str, value: &Value) -> Result<HashMap<String, i64>, StoreError> {
        let mut ids = HashMap::new();
        for s in codec::long_strings(value) {
            let hash = codec::string_hash(s);
            let check = check_hash(s);
            let known = self.inner.codec.interned.lock().unwrap_or_else(|e| e.into_inner()).get(&hash).copied();
            let id = match known {
                Some((id, c)) if c == check => Some(id),
                Some(_) => None,
                None if self.inner.codec.seen_before(hash) => self.store_string(op, hash, s).await?,
                None => None,
            };
            if let Some(id) = id {
                ids.insert(s.to_string(), id);
            }
        }
        Ok(ids)
    }

    async fn store_string(&self, op: &str, hash: i64, s: &str) -> Result<Option<i64>, StoreError> {
        let inserted: Option<(i64,)> = self
            .fetch_optional(op, "INSERT INTO strings (hash, body) VALUES ($1, $2) ON CONFLICT (hash) DO NOTHING RETURNING id", args![hash, s])
            .await?;
        let (id, body) = match inserted {
            Some((id,)) => (id, None),
            None => {
                let (id, body): (i64, String) = self.fetch_one(op, "SELECT id, body FROM strings WHERE hash = $1", args![hash]).await?;
                (id, Some(body))
            }
        };
        let check = match &body {
            Some(b) => check_hash(b),
            None => check_hash(s),
        };
        self.inner.codec.remember_interned(hash, id, check);
        Ok((body.is_none() || body.as_deref() == Some(s)).then_some(id))
    }

    /// The dictionary to compress a payload of `suite` with, if the suite has one yet; the
    /// payload counts as a training sample until it has.
    async fn dictionary_for(&self, op: &str, suite: &str, payload: &[u8]) -> Result<Option<(i64, Arc<Dictionary>)>, StoreError> {
        let known = self.inner.codec.suites.lock().unwrap_or_else(|e| e.into_inner()).contains_key(suite);
        if !known {
            // one trained earlier (by this store's earlier runs, or another process)
            let row: Option<(i64,)> =
                self.fetch_optional(op, "SELECT id FROM dictionaries WHERE suite = $1 ORDER BY id DESC LIMIT 1", args![suite]).await?;
            let state = match row {
                Some((id,)) => SuiteDictionary::Ready(id),
                None => SuiteDictionary::Collecting(Vec::new()),
            };
            self.inner.codec.suites.lock().unwrap_or_else(|e| e.into_inner()).entry(suite.to_string()).or_insert(state);
        }
        enum Next {
            Use(i64),
            Train(Vec<Vec<u8>>),
        }
        let next = {
            let mut suites = self.inner.codec.suites.lock().unwrap_or_else(|e| e.into_inner());
            let Some(state) = suites.get_mut(suite) else { return Ok(None) };
            match state {
                SuiteDictionary::Ready(id) => Next::Use(*id),
                SuiteDictionary::Collecting(samples) => {
                    samples.push(payload.to_vec());
                    if samples.len() < codec::DICTIONARY_SAMPLES {
                        return Ok(None);
                    }
                    let samples = std::mem::take(samples);
                    *state = SuiteDictionary::Training;
                    Next::Train(samples)
                }
                SuiteDictionary::Training | SuiteDictionary::Unavailable => return Ok(None),
            }
        };
        let samples = match next {
            Next::Train(samples) => samples,
            Next::Use(id) => return Ok(Some((id, self.dictionary(op, id).await?))),
        };
        let trained = match codec::train(&samples) {
            Ok(bytes) => bytes,
            Err(e) => {
                tracing::warn!("store {}: no compression dictionary for {suite}: {e}", self.inner.location);
                self.inner.codec.suites.lock().unwrap_or_else(|e| e.into_inner()).insert(suite.to_string(), SuiteDictionary::Unavailable);
                return Ok(None);
            }
        };
        let (id,): (i64,) = self
            .fetch_one(
                op,
                "INSERT INTO dictionaries (suite, body, created_at) VALUES ($1, $2, $3) RETURNING id",
                args![suite, trained.clone(), now_utc()],
            )
            .await?;
        let dictionary = Arc::new(Dictionary::new(&trained));
        self.inner.codec.dictionaries.lock().unwrap_or_else(|e| e.into_inner()).insert(id, dictionary.clone());
        self.inner.codec.suites.lock().unwrap_or_else(|e| e.into_inner()).insert(suite.to_string(), SuiteDictionary::Ready(id));
        Ok(Some((id, dictionary)))
    }

    /// Dictionary `id`, loaded once.
    async fn dictionary(&self, op: &str, id: i64) -> Result<Arc<Dictionary>, StoreError> {
        if let Some(d) = self.inner.codec.dictionaries.lock().unwrap_or_else(|e| e.into_inner()).get(&id) {
            return Ok(d.clone());
        }
        let row: Option<(Vec<u8>,)> = self.fetch_optional(op, "SELECT body FROM dictionaries WHERE id = $1", args![id]).await?;
        let (body,) = row.ok_or_else(|| self.corrupt(op, format!("compression dictionary {id} is missing")))?;
        let d = Arc::new(Dictionary::new(&body));
        self.inner.codec.dictionaries.lock().unwrap_or_else(|e| e.into_inner()).insert(id, d.clone());
        Ok(d)
    }

    /// The interned strings `ids` names.
    async fn strings(&self, op: &str, mut ids: Vec<i64>) -> Result<HashMap<i64, Arc<str>>, StoreError> {
        ids.sort_unstable();
        ids.dedup();
        let mut out = HashMap::with_capacity(ids.len());
        let mut missing = Vec::new();
        {
            let cache = self.inner.codec.strings.lock().unwrap_or_else(|e| e.into_inner());
            for id in ids {
                match cache.get(&id) {
                    Some(s) => {
                        out.insert(id, s.clone());
                    }
                    None => missing.push(id),
                }
            }
        }
        for chunk in missing.chunks(STRINGS_PER_QUERY) {
            let mut c = Conditions::default();
            c.is_in("id", chunk.iter().copied());
            let sql = format!("SELECT id, body FROM strings{}", c.where_sql());
            let rows: Vec<(i64, String)> = self.fetch_all(op, sqlx::AssertSqlSafe(sql), c.args).await?;
            let read: Vec<(i64, Arc<str>)> = rows.into_iter().map(|(id, body)| (id, Arc::from(body))).collect();
            out.extend(read.iter().cloned());
            self.inner.codec.remember_strings(read);
        }
        Ok(out)
    }

    /// The JSON payload of a packed row (strings still interned), decompressed with its
    /// dictionary.
    async fn unpack(&self, op: &str, r: &StoredTrajectory) -> Result<Vec<u8>, StoreError> {
        if r.codec != CODEC_PACKED {
            return Err(self.corrupt(op, format!("episode {}: unknown trajectory codec {}", r.id, r.codec)));
        }
        let dictionary = match r.dictionary {
            Some(d) => Some(self.dictionary(op, d).await?),
            None => None,
        };
        codec::decompress(&r.trajectory, dictionary.as_deref()).map_err(|e| self.codec_error(&format!("{op}: episode {}", r.id), e))
    }

    /// Decode stored trajectories into `T` (an [`crate::episode::Episode`], or any view of its
    /// JSON), keeping their order. A packed row is read straight into `T`, its references
    /// resolved as they are met ([`resolve`]): what `T` leaves out is skipped, not built.
    pub(crate) async fn decode_trajectories<T: DeserializeOwned>(&self, op: &str, rows: Vec<StoredTrajectory>) -> Result<Vec<(i64, T)>, StoreError> {
        let mut payloads = Vec::with_capacity(rows.len());
        let mut wanted = Vec::new();
        for r in rows {
            if r.codec == CODEC_JSON {
                payloads.push((r.id, false, r.trajectory));
                continue;
            }
            let payload = self.unpack(op, &r).await?;
            wanted.extend(codec::payload_references(&payload));
            payloads.push((r.id, true, payload));
        }
        let strings = self.strings(op, wanted).await?;
        payloads
            .into_iter()
            .map(|(id, packed, bytes)| {
                let decoded = if packed { resolve::from_payload(&bytes, &strings) } else { serde_json::from_slice(&bytes) };
                decoded.map(|t| (id, t)).map_err(|e| self.json_error(&format!("{op}: episode {id}"), e))
            })
            .collect()
    }

    /// The ids of the interned strings whose JSON form (as the trajectory's JSON text writes
    /// them, escapes included) holds `needle`, lowercased.
    pub(crate) async fn strings_containing(
        &self,
        op: &str,
        needle: &memchr::memmem::Finder<'_>,
    ) -> Result<std::collections::HashSet<i64>, StoreError> {
        const PAGE: i64 = 20_000;
        let mut out = std::collections::HashSet::new();
        let mut after = i64::MIN;
        loop {
            let rows: Vec<(i64, String)> =
                self.fetch_all(op, "SELECT id, body FROM strings WHERE id > $1 ORDER BY id LIMIT $2", args![after, PAGE]).await?;
            let Some(&(last, _)) = rows.last() else { break };
            for (id, body) in &rows {
                let json = serde_json::to_string(body).map_err(|e| self.json_error(op, e))?;
                if needle.find(json[1..json.len() - 1].to_ascii_lowercase().as_bytes()).is_some() {
                    out.insert(*id);
                }
            }
            if (rows.len() as i64) < PAGE {
                break;
            }
            after = last;
        }
        Ok(out)
    }

    /// The ids among `rows` whose task id or trajectory JSON text holds the lowercased needle
    /// (ASCII case-insensitive, as SQL `LIKE`), given the interned strings that hold it. A
    /// packed trajectory is searched as stored — its inline text, and its references looked up
    /// in `strings` — without being decoded; so a needle that runs across the edge of an
    /// interned string is not found (one within a string, or within the text between, is).
    pub(crate) async fn matching_text(
        &self,
        op: &str,
        rows: Vec<(String, StoredTrajectory)>,
        needle: &memchr::memmem::Finder<'_>,
        strings: &std::collections::HashSet<i64>,
    ) -> Result<Vec<i64>, StoreError> {
        let mut out = Vec::new();
        for (task, r) in rows {
            let (id, packed) = (r.id, r.codec != CODEC_JSON);
            let text = if packed { self.unpack(op, &r).await? } else { r.trajectory };
            let hit = needle.find(task.to_ascii_lowercase().as_bytes()).is_some()
                || needle.find(&text.to_ascii_lowercase()).is_some()
                || (packed && codec::payload_references(&text).any(|id| strings.contains(&id)));
            if hit {
                out.push(id);
            }
        }
        Ok(out)
    }

    /// How many episodes still hold a v1 JSON trajectory (see [`Store::compact`]).
    pub async fn json_episodes(&self) -> Result<u64, StoreError> {
        let (n,): (i64,) = self.fetch_one("count v1 episodes", "SELECT COUNT(*) FROM episodes WHERE codec = $1", args![CODEC_JSON]).await?;
        Ok(n.max(0) as u64)
    }

    /// Convert every trajectory a v1 store left as JSON text to the packed form, in batches
    /// (each its own transaction: an interrupted conversion keeps what it did and resumes), then
    /// give the space back (SQLite `VACUUM`). Returns how many episodes were converted. The
    /// trajectories read back identical.
    pub async fn compact(&self, mut progress: impl FnMut(u64, u64)) -> Result<u64, StoreError> {
        let op = "convert v1 trajectories";
        let total = self.json_episodes().await?;
        let mut done = 0;
        loop {
            let rows: Vec<(i64, String, Vec<u8>)> = self
                .fetch_all(op, "SELECT id, suite, trajectory FROM episodes WHERE codec = $1 ORDER BY id LIMIT $2", args![CODEC_JSON, COMPACT_BATCH])
                .await?;
            if rows.is_empty() {
                break;
            }
            let mut updates = Vec::with_capacity(rows.len());
            for (id, suite, json) in rows {
                let value: Value = serde_json::from_slice(&json).map_err(|e| self.json_error(&format!("{op}: episode {id}"), e))?;
                let e = self.encode_trajectory(op, &suite, value).await?;
                updates.push(args![e.codec, e.dictionary, e.blob, id]);
            }
            let n = updates.len() as u64;
            let result: Result<(), sqlx::Error> = on_backend!(self, |pool, DB| {
                async {
                    let mut tx = pool.begin().await?;
                    for a in updates {
                        let a = super::sql::arguments::<DB>(a)?;
                        sqlx::query_with::<DB, _>("UPDATE episodes SET codec = $1, dictionary = $2, trajectory = $3 WHERE id = $4", a)
                            .execute(&mut *tx)
                            .await?;
                    }
                    tx.commit().await
                }
                .await
            });
            result.map_err(|e| self.query_error(op, e))?;
            done += n;
            progress(done, total);
        }
        if done > 0 {
            if let Backend::Sqlite(_) = &self.inner.backend {
                self.execute("reclaim space", "VACUUM", Vec::new()).await?;
            }
        }
        Ok(done)
    }
}
