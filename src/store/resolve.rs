//! Reading a packed trajectory's JSON straight into the type a reader wants, with its string
//! references ([`super::codec`]) resolved as the parser meets them.
//!
//! Parsing a payload into a `serde_json::Value`, resolving the references in the tree and then
//! reading the type out of it builds every context message of every step, and frees them all
//! again, even for a reader that needs one field of each step. Here the parser feeds the type
//! directly: what the type does not name is skipped without being built, and a string is
//! resolved only where it is read. The result is the same value the tree would give: string
//! values are resolved (or unescaped) exactly as [`super::codec::resolve`] does, and object keys
//! are left as they are (they are never interned).

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use serde::de::{self, DeserializeOwned, DeserializeSeed, Deserializer, EnumAccess, MapAccess, SeqAccess, VariantAccess, Visitor};

use super::codec::{classify, Stored};

type Strings = HashMap<i64, Arc<str>>;

/// Read `T` from a packed payload (decompressed, strings still interned), resolving references
/// with `strings`.
pub(crate) fn from_payload<T: DeserializeOwned>(payload: &[u8], strings: &Strings) -> Result<T, serde_json::Error> {
    let mut de = serde_json::Deserializer::from_slice(payload);
    let t = T::deserialize(Resolving { de: &mut de, strings })?;
    de.end()?;
    Ok(t)
}

/// A deserializer that hands its visitors resolved strings.
struct Resolving<'s, D> {
    de: D,
    strings: &'s Strings,
}

/// A visitor that resolves the strings it is given before passing them on.
struct Wrap<'s, V> {
    visitor: V,
    strings: &'s Strings,
}

/// A string value of the payload as it reads: its text, or the interned string it names.
fn text<'t, 's, E: de::Error>(strings: &'s Strings, s: &'t str) -> Result<Resolved<'t, 's>, E> {
    match classify(s).map_err(E::custom)? {
        Stored::Text(t) => Ok(Resolved::Inline(t)),
        Stored::Ref(id) => strings.get(&id).map(|s| Resolved::Interned(s)).ok_or_else(|| E::custom(super::codec::InternError::Missing(id))),
    }
}

enum Resolved<'t, 's> {
    /// Text of the payload itself (a prefix escape removed).
    Inline(&'t str),
    Interned(&'s str),
}

macro_rules! forward_deserialize {
    ($($method:ident),* $(,)?) => {
        $(
            fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
                self.de.$method(Wrap { visitor, strings: self.strings })
            }
        )*
    };
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for Resolving<'_, D> {
    type Error = D::Error;

    forward_deserialize!(
        deserialize_any,
        deserialize_bool,
        deserialize_i8,
        deserialize_i16,
        deserialize_i32,
        deserialize_i64,
        deserialize_i128,
        deserialize_u8,
        deserialize_u16,
        deserialize_u32,
        deserialize_u64,
        deserialize_u128,
        deserialize_f32,
        deserialize_f64,
        deserialize_char,
        deserialize_str,
        deserialize_string,
        deserialize_bytes,
        deserialize_byte_buf,
        deserialize_option,
        deserialize_unit,
        deserialize_seq,
        deserialize_map,
        deserialize_identifier,
        deserialize_ignored_any,
    );

    fn deserialize_unit_struct<V: Visitor<'de>>(self, name: &'static str, visitor: V) -> Result<V::Value, D::Error> {
        self.de.deserialize_unit_struct(name, Wrap { visitor, strings: self.strings })
    }
    fn deserialize_newtype_struct<V: Visitor<'de>>(self, name: &'static str, visitor: V) -> Result<V::Value, D::Error> {
        self.de.deserialize_newtype_struct(name, Wrap { visitor, strings: self.strings })
    }
    fn deserialize_tuple<V: Visitor<'de>>(self, len: usize, visitor: V) -> Result<V::Value, D::Error> {
        self.de.deserialize_tuple(len, Wrap { visitor, strings: self.strings })
    }
    fn deserialize_tuple_struct<V: Visitor<'de>>(self, name: &'static str, len: usize, visitor: V) -> Result<V::Value, D::Error> {
        self.de.deserialize_tuple_struct(name, len, Wrap { visitor, strings: self.strings })
    }
    fn deserialize_struct<V: Visitor<'de>>(self, name: &'static str, fields: &'static [&'static str], visitor: V) -> Result<V::Value, D::Error> {
        self.de.deserialize_struct(name, fields, Wrap { visitor, strings: self.strings })
    }
    fn deserialize_enum<V: Visitor<'de>>(self, name: &'static str, variants: &'static [&'static str], visitor: V) -> Result<V::Value, D::Error> {
        self.de.deserialize_enum(name, variants, Wrap { visitor, strings: self.strings })
    }
    fn is_human_readable(&self) -> bool {
        self.de.is_human_readable()
    }
}

macro_rules! forward_visit {
    ($($method:ident($ty:ty)),* $(,)?) => {
        $(
            fn $method<E: de::Error>(self, v: $ty) -> Result<V::Value, E> {
                self.visitor.$method(v)
            }
        )*
    };
}

impl<'de, V: Visitor<'de>> Visitor<'de> for Wrap<'_, V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        self.visitor.expecting(f)
    }

    forward_visit!(
        visit_bool(bool),
        visit_i8(i8),
        visit_i16(i16),
        visit_i32(i32),
        visit_i64(i64),
        visit_i128(i128),
        visit_u8(u8),
        visit_u16(u16),
        visit_u32(u32),
        visit_u64(u64),
        visit_u128(u128),
        visit_f32(f32),
        visit_f64(f64),
        visit_char(char),
        visit_bytes(&[u8]),
        visit_borrowed_bytes(&'de [u8]),
        visit_byte_buf(Vec<u8>),
    );

    fn visit_str<E: de::Error>(self, v: &str) -> Result<V::Value, E> {
        match text(self.strings, v)? {
            Resolved::Inline(t) | Resolved::Interned(t) => self.visitor.visit_str(t),
        }
    }
    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<V::Value, E> {
        match text(self.strings, v)? {
            // the text is `v` with any escape in front removed: still borrowed from the payload
            Resolved::Inline(t) => self.visitor.visit_borrowed_str(&v[v.len() - t.len()..]),
            Resolved::Interned(t) => self.visitor.visit_str(t),
        }
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<V::Value, E> {
        match text(self.strings, &v)? {
            Resolved::Inline(t) if t.len() == v.len() => self.visitor.visit_string(v),
            Resolved::Inline(t) | Resolved::Interned(t) => self.visitor.visit_str(t),
        }
    }
    fn visit_none<E: de::Error>(self) -> Result<V::Value, E> {
        self.visitor.visit_none()
    }
    fn visit_unit<E: de::Error>(self) -> Result<V::Value, E> {
        self.visitor.visit_unit()
    }
    fn visit_some<D: Deserializer<'de>>(self, de: D) -> Result<V::Value, D::Error> {
        self.visitor.visit_some(Resolving { de, strings: self.strings })
    }
    fn visit_newtype_struct<D: Deserializer<'de>>(self, de: D) -> Result<V::Value, D::Error> {
        self.visitor.visit_newtype_struct(Resolving { de, strings: self.strings })
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<V::Value, A::Error> {
        self.visitor.visit_seq(Seq { seq, strings: self.strings })
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<V::Value, A::Error> {
        self.visitor.visit_map(Map { map, strings: self.strings })
    }
    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<V::Value, A::Error> {
        self.visitor.visit_enum(Enum { data, strings: self.strings })
    }
}

/// A seed whose deserializer resolves strings.
struct Seed<'s, S> {
    seed: S,
    strings: &'s Strings,
}

impl<'de, S: DeserializeSeed<'de>> DeserializeSeed<'de> for Seed<'_, S> {
    type Value = S::Value;
    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<S::Value, D::Error> {
        self.seed.deserialize(Resolving { de, strings: self.strings })
    }
}

struct Seq<'s, A> {
    seq: A,
    strings: &'s Strings,
}

impl<'de, A: SeqAccess<'de>> SeqAccess<'de> for Seq<'_, A> {
    type Error = A::Error;
    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>, A::Error> {
        self.seq.next_element_seed(Seed { seed, strings: self.strings })
    }
    fn size_hint(&self) -> Option<usize> {
        self.seq.size_hint()
    }
}

/// Object keys are read as they are; values are resolved.
struct Map<'s, A> {
    map: A,
    strings: &'s Strings,
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for Map<'_, A> {
    type Error = A::Error;
    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, A::Error> {
        self.map.next_key_seed(seed)
    }
    fn next_value_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<T::Value, A::Error> {
        self.map.next_value_seed(Seed { seed, strings: self.strings })
    }
    fn size_hint(&self) -> Option<usize> {
        self.map.size_hint()
    }
}

/// An enum's variant name is read as it is (a short identifier, never interned); its contents
/// are resolved.
struct Enum<'s, A> {
    data: A,
    strings: &'s Strings,
}

impl<'s, 'de, A: EnumAccess<'de>> EnumAccess<'de> for Enum<'s, A> {
    type Error = A::Error;
    type Variant = Variant<'s, A::Variant>;
    fn variant_seed<S: DeserializeSeed<'de>>(self, seed: S) -> Result<(S::Value, Self::Variant), A::Error> {
        let (value, variant) = self.data.variant_seed(seed)?;
        Ok((value, Variant { variant, strings: self.strings }))
    }
}

struct Variant<'s, A> {
    variant: A,
    strings: &'s Strings,
}

impl<'de, A: VariantAccess<'de>> VariantAccess<'de> for Variant<'_, A> {
    type Error = A::Error;
    fn unit_variant(self) -> Result<(), A::Error> {
        self.variant.unit_variant()
    }
    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, A::Error> {
        self.variant.newtype_variant_seed(Seed { seed, strings: self.strings })
    }
    fn tuple_variant<V: Visitor<'de>>(self, len: usize, visitor: V) -> Result<V::Value, A::Error> {
        self.variant.tuple_variant(len, Wrap { visitor, strings: self.strings })
    }
    fn struct_variant<V: Visitor<'de>>(self, fields: &'static [&'static str], visitor: V) -> Result<V::Value, A::Error> {
        self.variant.struct_variant(fields, Wrap { visitor, strings: self.strings })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    /// Reading straight from the payload gives what the tree route gives, for the whole value
    /// and for a type that reads part of it.
    #[test]
    fn same_as_resolving_the_tree() {
        let strings: Strings =
            [(7, Arc::from("a long interned observation text, long enough to be interned")), (9, Arc::from("\u{7f}starts with DEL"))]
                .into_iter()
                .collect();
        let payload = json!({
            "task_id": "t1",
            "steps": [
                {"calls": [{"observation": "\u{7f}7", "n": 1.5, "args": {"sql": "\u{7f}9", "\u{7f}key": "short"}}], "context": {"messages": ["\u{7f}7", "x"]}},
                {"calls": [], "escaped": "\u{7f}\u{7f}kept", "e": {"Variant": ["\u{7f}7", null]}, "u": "Unit"}
            ],
        });
        let bytes = serde_json::to_vec(&payload).unwrap();
        let mut tree: Value = serde_json::from_slice(&bytes).unwrap();
        super::super::codec::resolve(&mut tree, &strings).unwrap();
        let direct: Value = from_payload(&bytes, &strings).unwrap();
        assert_eq!(direct, tree);
        assert_eq!(direct["steps"][0]["calls"][0]["observation"], "a long interned observation text, long enough to be interned");
        assert_eq!(direct["steps"][1]["escaped"], "\u{7f}kept");

        #[derive(serde::Deserialize, PartialEq, Debug)]
        struct Call {
            observation: String,
            args: Value,
        }
        #[derive(serde::Deserialize, PartialEq, Debug)]
        enum E {
            Variant(String, Option<String>),
        }
        #[derive(serde::Deserialize, PartialEq, Debug)]
        struct Step {
            calls: Vec<Call>,
            #[serde(default)]
            e: Option<E>,
        }
        #[derive(serde::Deserialize, PartialEq, Debug)]
        struct View {
            task_id: String,
            steps: Vec<Step>,
        }
        let a: View = from_payload(&bytes, &strings).unwrap();
        let b: View = serde_json::from_value(tree).unwrap();
        assert_eq!(a, b);
        assert!(from_payload::<Value>(br#"{"a": "12"}"#, &strings).unwrap_err().to_string().contains("interned string 12 is missing"));
    }
}
