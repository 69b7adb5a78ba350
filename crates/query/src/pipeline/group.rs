//! `$group`: the group key, the accumulators and their MongoDB semantics.
//!
//! Documents whose `_id` values compare equal under MongoDB's order (1,
//! `NumberLong(1)` and 1.0; documents field by field) fall in one group: the
//! key of a group is the canonical index-key encoding of its `_id`, which
//! is identical exactly for equal values. The group's `_id` is the first
//! such value seen. Groups come out in order of first appearance, which
//! MongoDB leaves unspecified; `$addToSet` and `$setUnion` keep first
//! appearances in order (MongoDB leaves theirs unspecified too).
//!
//! The accumulators that keep `n` values (`$firstN`, `$topN`, ...) are in
//! [`super::group_n`]. `$accumulator` (JavaScript), `$median` and
//! `$percentile` (MongoDB's approximate t-digest results cannot be
//! reproduced) are refused with NotImplemented.
//!
//! Invariants:
//! - A group's states are made when its first document arrives, with the
//!   group's `n` evaluated then; each document is folded into every state of
//!   its group once, in input order.
//! - The byte counts of `$push`, `$addToSet`, `$concatArrays`, `$setUnion`
//!   and the N accumulators are the sizes of the values they hold, checked
//!   against the memory limit (146) whenever they grow.
//! - A grouping's estimated size ([`Grouping::bytes`]: per group its key, its `_id` and a
//!   fixed cost per accumulator, plus what the collecting accumulators hold) is checked
//!   after every document against [`Foreign::group_memory`]. Past it the stage fails with
//!   292 (mongod's `internalDocumentSourceGroupMaxMemoryBytes`), or with `allowDiskUse`
//!   stops making groups: a document of a group already held is folded in memory, any
//!   other goes, keyed by the canonical encoding of its `_id`, through the blocking sort
//!   ([`Foreign::sort`], which spills), and the sorted run of each key is folded into one
//!   group at a time. Every group is then made from all of its documents in input order,
//!   in memory or from the sort (stable: ties in input order), never split between them.

use super::fields;
use super::group_n::{Count, End, Kept, NState, SortBy};
use super::{Documents, Foreign};
use crate::error::QueryError;
use crate::expr::{Deviation, Expression, Simple, Total, value_to_raw};
use crate::limits::ACCUMULATOR_BYTES_MAX;
use crate::variables::Variables;
use bson::raw::{RawDocument, RawDocumentBuf, cstr};
use bson::{Bson, Document, RawBsonRef};
use bson_canonical::compare::elements;
use std::cell::RefCell;
use std::cmp::Ordering;
use std::collections::{HashMap, HashSet};
use std::rc::Rc;
use std::sync::OnceLock;

/// The estimated bytes of a group besides its key and `_id` (the map entry, the vector of
/// states) and of each accumulator's state besides what it collects.
const GROUP_BYTES: usize = 64;
const STATE_BYTES: usize = 48;

/// How much a `$group` may hold in memory ([`Foreign::group_memory`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GroupMemory {
    /// The most estimated bytes of groups held in memory.
    pub bytes_max: usize,
    /// Whether past `bytes_max` the remaining input goes through [`Foreign::sort`]
    /// (`allowDiskUse`), instead of failing with 292.
    pub spill: bool,
}

impl GroupMemory {
    /// No limit but the memory there is.
    pub const UNBOUNDED: GroupMemory = GroupMemory {
        bytes_max: usize::MAX,
        spill: false,
    };
}

/// mongod's error for a `$group` over its memory limit without `allowDiskUse`.
pub(crate) fn memory_exceeded() -> QueryError {
    QueryError::location(
        292,
        "Exceeded memory limit for $group, but didn't allow external sort. Pass \
         allowDiskUse:true to opt in.",
    )
    .context("PlanExecutor error during aggregation")
}

/// A parsed `$group` stage.
#[derive(Debug, Clone)]
pub(crate) struct Group {
    id: Expression,
    fields: Vec<Field>,
    bytes_max: usize,
}

/// One output field of a `$group`: its accumulator and the expressions it reads.
#[derive(Debug, Clone)]
struct Field {
    name: String,
    accumulator: Accumulator,
    /// The value folded in per document (`input` of the N accumulators,
    /// `output` of `$top`/`$bottom`).
    argument: Expression,
    /// `n` of the N accumulators.
    count: Option<Count>,
    /// `sortBy` of `$top`, `$bottom`, `$topN` and `$bottomN`.
    sort_by: Option<SortBy>,
}

impl Field {
    fn plain(name: String, accumulator: Accumulator, argument: Expression) -> Field {
        Field {
            name,
            accumulator,
            argument,
            count: None,
            sort_by: None,
        }
    }
}

/// The accumulators implemented (`$count: {}` is `$sum: 1`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Accumulator {
    Sum,
    Avg,
    Min,
    Max,
    First,
    Last,
    Push,
    AddToSet,
    MergeObjects,
    StdDevPop,
    StdDevSamp,
    ConcatArrays,
    SetUnion,
    FirstN,
    LastN,
    MinN,
    MaxN,
    Top,
    Bottom,
    TopN,
    BottomN,
}

impl Accumulator {
    /// The operator as written (`$count` is `$sum`).
    fn name(self) -> &'static str {
        match self {
            Accumulator::Sum => "$sum",
            Accumulator::Avg => "$avg",
            Accumulator::Min => "$min",
            Accumulator::Max => "$max",
            Accumulator::First => "$first",
            Accumulator::Last => "$last",
            Accumulator::Push => "$push",
            Accumulator::AddToSet => "$addToSet",
            Accumulator::MergeObjects => "$mergeObjects",
            Accumulator::StdDevPop => "$stdDevPop",
            Accumulator::StdDevSamp => "$stdDevSamp",
            Accumulator::ConcatArrays => "$concatArrays",
            Accumulator::SetUnion => "$setUnion",
            Accumulator::FirstN => "$firstN",
            Accumulator::LastN => "$lastN",
            Accumulator::MinN => "$minN",
            Accumulator::MaxN => "$maxN",
            Accumulator::Top => "$top",
            Accumulator::Bottom => "$bottom",
            Accumulator::TopN => "$topN",
            Accumulator::BottomN => "$bottomN",
        }
    }
}

/// Accumulators MongoDB has that this crate does not: refused with
/// NotImplemented rather than reported unknown.
const REFUSED_ACCUMULATORS: &[&str] = &["$accumulator", "$median", "$percentile"];

fn location(code: i32, message: impl Into<String>) -> QueryError {
    QueryError::location(code, message)
}

impl Group {
    /// Parses the specification of a `$group` stage.
    pub(crate) fn parse(spec: RawBsonRef<'_>, vars: &Variables) -> Result<Group, QueryError> {
        let RawBsonRef::Document(spec) = spec else {
            return Err(location(
                15947,
                "a group's fields must be specified in an object",
            ));
        };
        let mut id = None;
        let mut fields = Vec::new();
        for (name, value) in elements(spec) {
            if name == "_id" {
                if id.is_some() {
                    return Err(location(15948, "a group's _id may only be specified once"));
                }
                id = Some(Expression::parse_with(value, vars)?);
                continue;
            }
            fields.push(parse_accumulator(name, value, vars)?);
        }
        let Some(id) = id else {
            return Err(location(15955, "a group specification must include an _id"));
        };
        Ok(Group {
            id,
            fields,
            bytes_max: ACCUMULATOR_BYTES_MAX,
        })
    }

    /// `$sortByCount`'s group: `{_id: <expression>, count: {$sum: 1}}`.
    pub(crate) fn count_by(id: Expression) -> Group {
        Group {
            id,
            fields: vec![Field::plain("count".to_owned(), Accumulator::Sum, one())],
            bytes_max: ACCUMULATOR_BYTES_MAX,
        }
    }

    /// Groups the documents and returns one document per group.
    /// Adds the top-level input fields this group reads to `out`; `false` when it may read
    /// whole documents.
    pub(crate) fn top_fields(&self, out: &mut std::collections::BTreeSet<String>) -> bool {
        // `n` is evaluated against the group key, not the input documents.
        self.id.top_fields(out)
            && self.fields.iter().all(|f| {
                f.argument.top_fields(out) && f.sort_by.as_ref().is_none_or(|s| s.top_fields(out))
            })
    }

    pub(crate) fn run(
        &self,
        input: impl Iterator<Item = Result<RawDocumentBuf, QueryError>>,
    ) -> Result<Vec<RawDocumentBuf>, QueryError> {
        let mut grouping = Grouping::new(self);
        for doc in input {
            grouping.add_document(&doc?)?;
        }
        grouping.finish()
    }

    /// The stage's output over `input` within `foreign`'s [`GroupMemory`]: the groups in
    /// order of first appearance when they fit; past the limit 292, or with spilling the
    /// groups of the sorted remainder (in key order) and then the groups held.
    pub(crate) fn output<'a>(
        &'a self,
        mut input: Documents<'a>,
        foreign: &'a dyn Foreign,
    ) -> Result<Documents<'a>, QueryError> {
        let memory = foreign.group_memory();
        let mut grouping = Grouping::new(self);
        while let Some(doc) = input.next() {
            grouping.add_document(&doc?)?;
            if grouping.bytes > memory.bytes_max {
                if !memory.spill {
                    return Err(memory_exceeded());
                }
                return Ok(spill(grouping, input, foreign));
            }
        }
        Ok(Box::new(grouping.finish()?.into_iter().map(Ok)))
    }

    /// The output document of one group.
    fn output_document(&self, id: Bson, states: Vec<State>) -> Result<RawDocumentBuf, QueryError> {
        let mut doc = Document::new();
        doc.insert("_id", id);
        for (field, state) in self.fields.iter().zip(states) {
            doc.insert(field.name.clone(), state.finish());
        }
        super::stages::to_raw(&doc)
    }

    /// Whether an accumulator holds values that grow with its group
    /// ([`State::held`]).
    fn collects(&self) -> bool {
        self.fields.iter().any(|f| {
            matches!(
                f.accumulator,
                Accumulator::Push
                    | Accumulator::AddToSet
                    | Accumulator::ConcatArrays
                    | Accumulator::SetUnion
                    | Accumulator::FirstN
                    | Accumulator::LastN
                    | Accumulator::MinN
                    | Accumulator::MaxN
                    | Accumulator::Top
                    | Accumulator::Bottom
                    | Accumulator::TopN
                    | Accumulator::BottomN
            )
        })
    }

    /// Whether groupings of consecutive runs of the input merge ([`Grouping::merge`]) into
    /// exactly what one grouping of the whole input gives, whatever the values: counts
    /// (`$sum`/`$avg` of an integer constant: integer totals add exactly; a double total's
    /// rounding would depend on the split), `$min`, `$max`, `$first` and `$last`.
    fn mergeable(&self) -> bool {
        self.fields.iter().all(|f| match f.accumulator {
            Accumulator::Sum | Accumulator::Avg => matches!(
                f.argument.simple(),
                Some(Simple::Constant(Bson::Int32(_) | Bson::Int64(_)))
            ),
            Accumulator::Min | Accumulator::Max | Accumulator::First | Accumulator::Last => {
                f.sort_by.is_none() && f.count.is_none()
            }
            _ => false,
        })
    }

    /// The inputs read straight from document bytes, when `_id` and every accumulator's
    /// argument are constants or top-level fields and no accumulator sorts (`$top` and
    /// kin read sort keys from the whole document).
    fn byte_inputs(&self) -> Option<(Input, Vec<Input>)> {
        let id = Input::of(&self.id)?;
        let arguments = self
            .fields
            .iter()
            .map(|f| match f.sort_by {
                Some(_) => None,
                None => Input::of(&f.argument),
            })
            .collect::<Option<Vec<_>>>()?;
        Some((id, arguments))
    }

    fn accumulate(&self, states: &mut [State], doc: &RawDocument) -> Result<(), QueryError> {
        for (field, state) in self.fields.iter().zip(states) {
            let value = field.argument.evaluate(doc)?;
            let key = match &field.sort_by {
                Some(sort_by) => Some((sort_by, sort_by.key(doc)?)),
                None => None,
            };
            state.add(field.accumulator.name(), value, key, self.bytes_max)?;
        }
        Ok(())
    }
}

/// How the byte path reads one input of a `$group`.
#[derive(Debug, Clone)]
enum Input {
    /// The same value for every document (`None`: missing).
    Constant(Option<Bson>),
    /// A top-level field, read from the bytes by length-skipping.
    Field(String),
}

impl Input {
    fn of(expression: &Expression) -> Option<Input> {
        Some(match expression.simple()? {
            Simple::Constant(value) => Input::Constant(Some(value.clone())),
            Simple::Field(name) => Input::Field(name.to_owned()),
        })
    }

    /// The raw value this input reads in `doc` (`None`: missing).
    fn read<'a>(&self, doc: &'a [u8]) -> Option<RawBsonRef<'a>> {
        match self {
            Input::Constant(_) => None,
            Input::Field(name) => crate::raw::get_field_in(doc, name),
        }
    }

    /// The value as `Expression::evaluate` returns it.
    fn value(&self, doc: &[u8]) -> Result<Option<Bson>, QueryError> {
        match self {
            Input::Constant(value) => Ok(value.clone()),
            Input::Field(_) => self.read(doc).map(to_bson).transpose(),
        }
    }
}

fn to_bson(value: RawBsonRef<'_>) -> Result<Bson, QueryError> {
    Bson::try_from(value).map_err(|e| QueryError::bad_value(e.to_string()))
}

/// A `$group` being computed: documents are folded in one at a time, the groups come
/// out at [`Grouping::finish`].
///
/// Two ways in, one result: [`Grouping::add_document`] evaluates the stage's
/// expressions on a parsed document (any `$group`); [`Grouping::add_bytes`] reads a
/// stored document's bytes where it lies, and for a `$group` whose `_id` and arguments
/// are constants or top-level fields ([`Group::byte_inputs`]) reads just those fields by
/// length-skipping (no copy, no allocation for an existing group, the document's last
/// page untouched) and keys the group from the raw value. Both key a group by the
/// canonical encoding of its `_id` and fold values through the same [`State::add`]; the
/// pipeline differential tests hold them to the same output.
pub(crate) struct Grouping<'g> {
    group: &'g Group,
    inputs: Option<(Input, Vec<Input>)>,
    /// Groups whose `_id` is a whole number within `i64`, by that number
    /// (`bson_canonical::compare::whole_number`: equal numbers of any type give the same
    /// one, so 1, `NumberLong(1)` and 1.0 are one group, as their canonical encodings are):
    /// the commonest `_id`s need no key encoding.
    wholes: HashMap<i64, usize, ahash::RandomState>,
    /// Every other group, by the canonical encoding of its `_id`. Both maps hash with
    /// ahash's random keys; their order never shapes the output (`groups` keeps the order
    /// of first appearance).
    index: HashMap<Vec<u8>, usize, ahash::RandomState>,
    groups: Vec<(Bson, Vec<State>)>,
    /// The encoded key being looked up, reused between documents.
    key: Vec<u8>,
    /// The estimated size of the groups (the module's header).
    bytes: usize,
    /// Whether [`Group::collects`]: the states' growth is counted per document.
    collects: bool,
}

/// Which map a group's key is in.
#[derive(Clone, Copy)]
enum Key {
    Whole(i64),
    /// The encoding in `Grouping::key`.
    Encoded,
}

impl<'g> Grouping<'g> {
    pub(crate) fn new(group: &'g Group) -> Grouping<'g> {
        Grouping {
            group,
            inputs: group.byte_inputs(),
            wholes: HashMap::default(),
            index: HashMap::default(),
            groups: Vec::new(),
            key: Vec::new(),
            bytes: 0,
            collects: group.collects(),
        }
    }

    /// The estimated size of the groups held (the module's header).
    pub(crate) fn bytes(&self) -> usize {
        self.bytes
    }

    /// The key of a group whose `_id` is `id` (its encoding left in `self.key`).
    fn key_of(&mut self, id: RawBsonRef<'_>) -> Key {
        if let Some(n) = bson_canonical::compare::whole_number(id) {
            return Key::Whole(n);
        }
        self.key.clear();
        bson_canonical::key::encode_into(id, &mut self.key);
        Key::Encoded
    }

    /// Folds in a parsed document.
    pub(crate) fn add_document(&mut self, doc: &RawDocument) -> Result<(), QueryError> {
        let id = self.group.id.evaluate(doc)?.unwrap_or(Bson::Null);
        let key = self.key_of(value_to_raw(&id).as_raw_bson_ref());
        let position = self.position(key, || Ok(id))?;
        self.fold(position, doc)
    }

    /// Folds `doc` into the group at `position`, counting what its states grow by.
    fn fold(&mut self, position: usize, doc: &RawDocument) -> Result<(), QueryError> {
        let (_, states) = &mut self.groups[position];
        if !self.collects {
            return self.group.accumulate(states, doc);
        }
        let before = held(states);
        let done = self.group.accumulate(states, doc);
        self.bytes = (self.bytes + held(states)).saturating_sub(before);
        done
    }

    /// With spilling ([`spill`]): folds `doc` in when its group is held and gives `None`,
    /// else gives the document to sort, `{k: <canonical key of the _id>, i: <_id>, d: doc}`.
    fn add_held(&mut self, doc: &RawDocument) -> Result<Option<RawDocumentBuf>, QueryError> {
        let id = self.group.id.evaluate(doc)?.unwrap_or(Bson::Null);
        let raw_id = value_to_raw(&id);
        let key = self.key_of(raw_id.as_raw_bson_ref());
        let found = match key {
            Key::Whole(n) => self.wholes.get(&n),
            Key::Encoded => self.index.get(self.key.as_slice()),
        };
        if let Some(&position) = found {
            self.fold(position, doc)?;
            return Ok(None);
        }
        let mut encoded = Vec::new();
        bson_canonical::key::encode_into(raw_id.as_raw_bson_ref(), &mut encoded);
        let mut keyed = RawDocumentBuf::new();
        keyed.append(
            cstr!("k"),
            bson::RawBinaryRef {
                subtype: bson::spec::BinarySubtype::Generic,
                bytes: &encoded,
            },
        );
        keyed.append(cstr!("i"), raw_id);
        keyed.append(cstr!("d"), doc.to_owned());
        Ok(Some(keyed))
    }

    /// Folds in the bytes of one well-formed BSON document (what a store keeps: validated
    /// on the way in), read only as far as the fields the `$group` names when its inputs
    /// allow ([`Group::byte_inputs`]), else parsed and passed to
    /// [`Grouping::add_document`].
    pub(crate) fn add_bytes(&mut self, doc: &[u8]) -> Result<(), QueryError> {
        let Some((id_input, _)) = &self.inputs else {
            let doc =
                RawDocument::from_bytes(doc).map_err(|e| QueryError::bad_value(e.to_string()))?;
            return self.add_document(doc);
        };
        if !crate::raw::is_framed(doc) {
            return Err(QueryError::bad_value(
                "document length does not match its bytes",
            ));
        }
        let position = match id_input {
            // One group for every document.
            Input::Constant(_) if !self.groups.is_empty() => 0,
            Input::Constant(value) => {
                let value = value.clone().unwrap_or(Bson::Null);
                let key = self.key_of(value_to_raw(&value).as_raw_bson_ref());
                self.position(key, || Ok(value))?
            }
            Input::Field(_) => {
                // The group's `_id` value is built only when the group is new.
                let raw = id_input.read(doc);
                let key = self.key_of(raw.unwrap_or(RawBsonRef::Null));
                self.position(key, || raw.map_or(Ok(Bson::Null), to_bson))?
            }
        };
        let Grouping {
            group,
            inputs,
            groups,
            ..
        } = self;
        let arguments = inputs
            .as_ref()
            .map(|(_, a)| a.as_slice())
            .unwrap_or_default();
        let (_, states) = &mut groups[position];
        let before = if self.collects { held(states) } else { 0 };
        for ((field, state), input) in group.fields.iter().zip(states.iter_mut()).zip(arguments) {
            match (input, state) {
                // A count: the constant added as `State::add` would, without a copy of it.
                (Input::Constant(Some(value)), State::Sum(total) | State::Avg(total)) => {
                    total.add(value);
                }
                (input, state) => {
                    let value = input.value(doc)?;
                    state.add(field.accumulator.name(), value, None, group.bytes_max)?;
                }
            }
        }
        if self.collects {
            self.bytes = (self.bytes + held(states)).saturating_sub(before);
        }
        Ok(())
    }

    /// The position of the group keyed `key`, made (with the `_id` `id` gives) when this
    /// is its first document.
    fn position(
        &mut self,
        key: Key,
        id: impl FnOnce() -> Result<Bson, QueryError>,
    ) -> Result<usize, QueryError> {
        let found = match key {
            Key::Whole(n) => self.wholes.get(&n),
            Key::Encoded => self.index.get(self.key.as_slice()),
        };
        if let Some(&position) = found {
            return Ok(position);
        }
        let id = id()?;
        let states = self
            .group
            .fields
            .iter()
            .map(|f| State::new(f, &id))
            .collect::<Result<_, _>>()?;
        let key_bytes = match key {
            Key::Whole(_) => 8,
            Key::Encoded => self.key.len(),
        };
        self.bytes = self.bytes.saturating_add(
            GROUP_BYTES + key_bytes + value_size(&id) + STATE_BYTES * self.group.fields.len(),
        );
        self.groups.push((id, states));
        let position = self.groups.len() - 1;
        match key {
            Key::Whole(n) => self.wholes.insert(n, position),
            Key::Encoded => self.index.insert(self.key.clone(), position),
        };
        Ok(position)
    }

    /// An empty grouping of the same stage, for a later run of the input, when the two
    /// merge exactly ([`Group::mergeable`]).
    pub(crate) fn fork(&self) -> Option<Grouping<'g>> {
        self.group.mergeable().then(|| Grouping::new(self.group))
    }

    /// Folds in `later`, a [`Grouping::fork`] of this one fed the documents after this one's:
    /// the groups and states are those one grouping fed both runs in order would hold
    /// (groups new in `later` come after this one's, in their order of first appearance).
    pub(crate) fn merge(&mut self, later: Grouping<'g>) {
        // Groups in both are counted twice: an over-estimate, never an under-estimate.
        self.bytes = self.bytes.saturating_add(later.bytes);
        let mut keys: Vec<Option<Result<i64, Vec<u8>>>> = vec![None; later.groups.len()];
        for (n, position) in later.wholes {
            keys[position] = Some(Ok(n));
        }
        for (key, position) in later.index {
            keys[position] = Some(Err(key));
        }
        for (key, (id, states)) in keys.into_iter().zip(later.groups) {
            let key = key.expect("every group is in one of the maps");
            let found = match &key {
                Ok(n) => self.wholes.get(n),
                Err(bytes) => self.index.get(bytes.as_slice()),
            };
            if let Some(&position) = found {
                for (mine, theirs) in self.groups[position].1.iter_mut().zip(states) {
                    mine.merge(theirs);
                }
                continue;
            }
            self.groups.push((id, states));
            let position = self.groups.len() - 1;
            match key {
                Ok(n) => self.wholes.insert(n, position),
                Err(bytes) => self.index.insert(bytes, position),
            };
        }
    }

    /// One document per group, in order of first appearance.
    pub(crate) fn finish(self) -> Result<Vec<RawDocumentBuf>, QueryError> {
        let mut out = Vec::with_capacity(self.groups.len());
        for (id, states) in self.groups {
            out.push(self.group.output_document(id, states)?);
        }
        Ok(out)
    }
}

fn one() -> Expression {
    Expression::parse(RawBsonRef::Int32(1)).expect("the literal 1 is an expression")
}

fn parse_accumulator(
    name: &str,
    value: RawBsonRef<'_>,
    vars: &Variables,
) -> Result<Field, QueryError> {
    let spec = match value {
        RawBsonRef::Document(spec)
            if elements(spec)
                .next()
                .is_some_and(|(k, _)| k.starts_with('$')) =>
        {
            spec
        }
        _ => {
            return Err(location(
                40234,
                format!("The field '{name}' must be an accumulator object"),
            ));
        }
    };
    if name.contains('.') {
        return Err(location(
            40235,
            format!("The field name '{name}' cannot contain '.'"),
        ));
    }
    if name.starts_with('$') {
        return Err(location(
            40236,
            format!("The field name '{name}' cannot be an operator name"),
        ));
    }
    let mut operators = elements(spec);
    let (operator, argument) = match (operators.next(), operators.next()) {
        (Some(first), None) => first,
        _ => {
            return Err(location(
                40238,
                format!("The field '{name}' must specify one accumulator"),
            ));
        }
    };
    if matches!(argument, RawBsonRef::Array(_)) {
        return Err(location(
            40237,
            format!("The {operator} accumulator is a unary operator"),
        ));
    }
    let accumulator = match operator {
        "$sum" => Accumulator::Sum,
        "$avg" => Accumulator::Avg,
        "$min" => Accumulator::Min,
        "$max" => Accumulator::Max,
        "$first" => Accumulator::First,
        "$last" => Accumulator::Last,
        "$push" => Accumulator::Push,
        "$addToSet" => Accumulator::AddToSet,
        "$mergeObjects" => Accumulator::MergeObjects,
        "$stdDevPop" => Accumulator::StdDevPop,
        "$stdDevSamp" => Accumulator::StdDevSamp,
        "$concatArrays" => Accumulator::ConcatArrays,
        "$setUnion" => Accumulator::SetUnion,
        "$firstN" | "$lastN" | "$minN" | "$maxN" => {
            let accumulator = match operator {
                "$firstN" => Accumulator::FirstN,
                "$lastN" => Accumulator::LastN,
                "$minN" => Accumulator::MinN,
                _ => Accumulator::MaxN,
            };
            let (count, input) = super::group_n::parse_n_input(operator, argument, vars)?;
            return Ok(Field {
                count: Some(count),
                ..Field::plain(name.to_owned(), accumulator, input)
            });
        }
        "$top" | "$bottom" | "$topN" | "$bottomN" => {
            let accumulator = match operator {
                "$top" => Accumulator::Top,
                "$bottom" => Accumulator::Bottom,
                "$topN" => Accumulator::TopN,
                _ => Accumulator::BottomN,
            };
            let single = matches!(accumulator, Accumulator::Top | Accumulator::Bottom);
            let (count, output, sort_by) =
                super::group_n::parse_ranked(operator, argument, single, vars)?;
            return Ok(Field {
                count: Some(count),
                sort_by: Some(sort_by),
                ..Field::plain(name.to_owned(), accumulator, output)
            });
        }
        "$count" => {
            return match argument {
                RawBsonRef::Document(d) if d.is_empty() => {
                    Ok(Field::plain(name.to_owned(), Accumulator::Sum, one()))
                }
                _ => Err(QueryError::TypeMismatch(
                    "$count takes no arguments, i.e. $count:{}".to_owned(),
                )),
            };
        }
        _ if REFUSED_ACCUMULATORS.contains(&operator) => {
            return Err(QueryError::NotImplemented(format!(
                "the {operator} accumulator is not implemented"
            )));
        }
        _ => {
            return Err(location(
                15952,
                format!("unknown group operator '{operator}'"),
            ));
        }
    };
    Ok(Field::plain(
        name.to_owned(),
        accumulator,
        Expression::parse_with(argument, vars)?,
    ))
}

/// What the collecting states of one group hold ([`State::held`]).
fn held(states: &[State]) -> usize {
    states.iter().map(State::held).sum()
}

/// The sort that brings the documents of one group together: by the canonical key of the
/// group's `_id` (BinData: equal keys are equal bytes), ties in input order.
fn by_key() -> &'static crate::sort::SortSpec {
    static BY_KEY: OnceLock<crate::sort::SortSpec> = OnceLock::new();
    BY_KEY.get_or_init(|| {
        crate::sort::SortSpec::parse(&bson::rawdoc! { "k": 1 })
            .expect("a one-field ascending sort parses")
    })
}

/// A `$group` past its memory limit with spilling (the module's header): the groups of
/// `grouping` keep folding their documents in memory; every other document of `input`
/// goes through `foreign`'s sort by group key, whose sorted runs come out one group at a
/// time, and then the held groups (the sort has then read all of `input`).
fn spill<'a>(
    grouping: Grouping<'a>,
    input: Documents<'a>,
    foreign: &'a dyn Foreign,
) -> Documents<'a> {
    let group = grouping.group;
    let held = Rc::new(RefCell::new(grouping));
    let feeding = Rc::clone(&held);
    let keyed: Documents<'a> = Box::new(input.filter_map(move |doc| match doc {
        Ok(doc) => feeding.borrow_mut().add_held(&doc).transpose(),
        Err(e) => Some(Err(e)),
    }));
    let mut pending = Some(keyed);
    let mut sorted: Option<std::iter::Peekable<Documents<'a>>> = None;
    let runs = std::iter::from_fn(move || {
        if let Some(keyed) = pending.take() {
            match foreign.sort(by_key(), None, keyed) {
                Ok(stream) => sorted = Some(stream.peekable()),
                Err(e) => return Some(Err(e)),
            }
        }
        let sorted = sorted.as_mut()?;
        let first = match sorted.next()? {
            Ok(first) => first,
            Err(e) => return Some(Err(e)),
        };
        Some(fold_run(group, &first, sorted))
    });
    let mut rest = Some(held);
    let held_groups = std::iter::from_fn(move || {
        let held = rest.take()?;
        let grouping = std::mem::replace(&mut *held.borrow_mut(), Grouping::new(group));
        Some(match grouping.finish() {
            Ok(docs) => Box::new(docs.into_iter().map(Ok)) as Documents<'a>,
            Err(e) => Box::new(std::iter::once(Err(e))),
        })
    })
    .flatten();
    Box::new(runs.chain(held_groups))
}

/// One group from the sorted documents of [`spill`]: `first` and every following one
/// with the same key.
fn fold_run(
    group: &Group,
    first: &RawDocument,
    sorted: &mut std::iter::Peekable<Documents<'_>>,
) -> Result<RawDocumentBuf, QueryError> {
    fn part<'k>(keyed: &'k RawDocument, name: &str) -> Result<RawBsonRef<'k>, QueryError> {
        keyed
            .get(name)
            .ok()
            .flatten()
            .ok_or_else(|| QueryError::bad_value(format!("a spilled $group document lacks {name}")))
    }
    let key_of = |keyed: &RawDocument| match part(keyed, "k")? {
        RawBsonRef::Binary(b) => Ok(b.bytes.to_vec()),
        _ => Err(QueryError::bad_value("a spilled $group key is not binary")),
    };
    let document_of = |keyed: &RawDocument| match part(keyed, "d")? {
        RawBsonRef::Document(d) => Ok(d.to_owned()),
        _ => Err(QueryError::bad_value(
            "a spilled $group document is not a document",
        )),
    };
    let key = key_of(first)?;
    let id = to_bson(part(first, "i")?)?;
    let mut states = group
        .fields
        .iter()
        .map(|f| State::new(f, &id))
        .collect::<Result<Vec<_>, _>>()?;
    group.accumulate(&mut states, &document_of(first)?)?;
    loop {
        match sorted.peek() {
            Some(Ok(next)) if key_of(next)? == key => {}
            _ => break,
        }
        if let Some(Ok(next)) = sorted.next() {
            group.accumulate(&mut states, &document_of(&next)?)?;
        }
    }
    group.output_document(id, states)
}

/// The running state of one accumulator in one group.
#[derive(Debug, Clone)]
enum State {
    Sum(Total),
    Avg(Total),
    Min(Option<Bson>),
    Max(Option<Bson>),
    First(Option<Bson>),
    Last(Bson),
    Push(Vec<Bson>, usize),
    AddToSet(Vec<Bson>, HashSet<Vec<u8>>, usize),
    MergeObjects(Document),
    StdDev(Deviation, bool),
    ConcatArrays(Vec<Bson>, usize),
    SetUnion(Vec<Bson>, HashSet<Vec<u8>>, usize),
    N(NState),
}

impl State {
    /// The state of `field` in the group whose `_id` is `id`.
    fn new(field: &Field, id: &Bson) -> Result<State, QueryError> {
        let n = || match &field.count {
            Some(count) => count.evaluate(id),
            None => Ok(1),
        };
        Ok(match field.accumulator {
            Accumulator::Sum => State::Sum(Total::new()),
            Accumulator::Avg => State::Avg(Total::new()),
            Accumulator::Min => State::Min(None),
            Accumulator::Max => State::Max(None),
            Accumulator::First => State::First(None),
            Accumulator::Last => State::Last(Bson::Null),
            Accumulator::Push => State::Push(Vec::new(), 0),
            Accumulator::AddToSet => State::AddToSet(Vec::new(), HashSet::new(), 0),
            Accumulator::MergeObjects => State::MergeObjects(Document::new()),
            Accumulator::StdDevPop | Accumulator::StdDevSamp => State::StdDev(
                Deviation::default(),
                field.accumulator == Accumulator::StdDevSamp,
            ),
            Accumulator::ConcatArrays => State::ConcatArrays(Vec::new(), 0),
            Accumulator::SetUnion => State::SetUnion(Vec::new(), HashSet::new(), 0),
            Accumulator::FirstN => State::N(NState::First(n()?, Vec::new(), 0)),
            Accumulator::LastN => State::N(NState::Last(n()?, Default::default(), 0)),
            Accumulator::MinN => State::N(NState::Extreme(Kept::new(n()?, End::Low))),
            Accumulator::MaxN => State::N(NState::Extreme(Kept::new(n()?, End::High))),
            Accumulator::Top | Accumulator::TopN => State::N(NState::Ranked(
                Kept::new(n()?, End::Low),
                field.accumulator == Accumulator::Top,
            )),
            Accumulator::Bottom | Accumulator::BottomN => State::N(NState::Ranked(
                Kept::new(n()?, End::High),
                field.accumulator == Accumulator::Bottom,
            )),
        })
    }

    /// Folds in one document's value (`None`: missing) and, for `$top` and
    /// kin, its sort key. `operator` names the accumulator in error messages.
    fn add(
        &mut self,
        operator: &str,
        value: Option<Bson>,
        key: Option<(&SortBy, crate::sort::SortKey)>,
        bytes_max: usize,
    ) -> Result<(), QueryError> {
        match self {
            State::Sum(total) | State::Avg(total) => {
                if let Some(v) = &value {
                    total.add(v);
                }
            }
            State::Min(best) => keep_best(best, value, Ordering::Less),
            State::Max(best) => keep_best(best, value, Ordering::Greater),
            State::First(first) => {
                if first.is_none() {
                    *first = Some(value.unwrap_or(Bson::Null));
                }
            }
            State::Last(last) => *last = value.unwrap_or(Bson::Null),
            State::Push(items, bytes) => {
                if let Some(v) = value {
                    *bytes = bytes.saturating_add(value_size(&v));
                    check_memory("$push", *bytes, bytes_max)?;
                    items.push(v);
                }
            }
            State::AddToSet(items, seen, bytes) => {
                if let Some(v) = value {
                    add_to_set(items, seen, bytes, v, "$addToSet", bytes_max)?;
                }
            }
            State::MergeObjects(merged) => match value {
                None | Some(Bson::Null | Bson::Undefined) => {}
                Some(Bson::Document(doc)) => {
                    for (name, v) in doc {
                        merged.insert(name, v);
                    }
                }
                Some(other) => {
                    return Err(location(
                        40400,
                        format!(
                            "$mergeObjects requires object inputs, but input {} is of type {}",
                            fields::show(&other),
                            crate::expr::value_type_name(&Some(other.clone()))
                        ),
                    ));
                }
            },
            State::StdDev(deviation, _) => {
                if let Some(v) = &value {
                    deviation.add(v);
                }
            }
            State::ConcatArrays(items, bytes) => match value {
                None => {}
                Some(Bson::Array(values)) => {
                    let size = values.iter().map(|v| 8 + value_size(v)).sum::<usize>();
                    *bytes = bytes.saturating_add(size);
                    if *bytes > bytes_max {
                        return Err(QueryError::ExceededMemoryLimit(format!(
                            "$concatArrays used too much memory and cannot spill to disk. \
                             Memory limit: {bytes_max} bytes"
                        )));
                    }
                    items.extend(values);
                }
                Some(other) => return Err(requires_arrays("$concatArrays", &other)),
            },
            State::SetUnion(items, seen, bytes) => match value {
                None => {}
                Some(Bson::Array(values)) => {
                    for v in values {
                        add_to_set(items, seen, bytes, v, "$setUnion", bytes_max)?;
                    }
                }
                Some(other) => return Err(requires_arrays("$setUnion", &other)),
            },
            State::N(state) => state.add(operator, value, key, bytes_max)?,
        }
        Ok(())
    }

    /// The bytes a collecting state holds (0 for the others), for [`Grouping::bytes`].
    fn held(&self) -> usize {
        match self {
            State::Push(_, bytes)
            | State::AddToSet(_, _, bytes)
            | State::ConcatArrays(_, bytes)
            | State::SetUnion(_, _, bytes) => *bytes,
            State::N(state) => state.held(),
            _ => 0,
        }
    }

    /// Folds in the state of the same accumulator over later documents of the group: only
    /// for the accumulators [`Group::mergeable`] allows.
    fn merge(&mut self, later: State) {
        match (self, later) {
            (State::Sum(total) | State::Avg(total), State::Sum(more) | State::Avg(more)) => {
                total.merge_integers(&more);
            }
            (State::Min(best), State::Min(other)) => keep_best(best, other, Ordering::Less),
            (State::Max(best), State::Max(other)) => keep_best(best, other, Ordering::Greater),
            (State::First(first), State::First(other)) => {
                if first.is_none() {
                    *first = other;
                }
            }
            (State::Last(last), State::Last(other)) => *last = other,
            _ => unreachable!("Group::mergeable allows only these accumulators"),
        }
    }

    fn finish(self) -> Bson {
        match self {
            State::Sum(total) => total.sum(),
            State::Avg(total) => total.average(),
            State::Min(best) | State::Max(best) => best.unwrap_or(Bson::Null),
            State::First(first) => first.unwrap_or(Bson::Null),
            State::Last(last) => last,
            State::Push(items, _)
            | State::AddToSet(items, _, _)
            | State::ConcatArrays(items, _)
            | State::SetUnion(items, _, _) => Bson::Array(items),
            State::MergeObjects(merged) => Bson::Document(merged),
            State::StdDev(deviation, sample) => deviation.result(sample),
            State::N(state) => state.finish(),
        }
    }
}

/// Adds `value` to a set kept in first-appearance order.
fn add_to_set(
    items: &mut Vec<Bson>,
    seen: &mut HashSet<Vec<u8>>,
    bytes: &mut usize,
    value: Bson,
    name: &str,
    bytes_max: usize,
) -> Result<(), QueryError> {
    let key = bson_canonical::encode(value_to_raw(&value).as_raw_bson_ref());
    if seen.insert(key) {
        *bytes = bytes.saturating_add(value_size(&value));
        check_memory(name, *bytes, bytes_max)?;
        items.push(value);
    }
    Ok(())
}

/// `$concatArrays` and `$setUnion` of a value that is not an array (14).
fn requires_arrays(name: &str, value: &Bson) -> QueryError {
    QueryError::TypeMismatch(format!(
        "{name} requires array inputs, but input {} is of type {}",
        fields::show(value),
        crate::expr::value_type_name(&Some(value.clone()))
    ))
}

/// `$min` / `$max`: null, undefined and missing are skipped; a value
/// replaces the best so far only when strictly better, so ties keep the first.
fn keep_best(best: &mut Option<Bson>, value: Option<Bson>, want: Ordering) {
    let Some(candidate) = value.filter(|v| !matches!(v, Bson::Null | Bson::Undefined)) else {
        return;
    };
    let better = match best {
        None => true,
        Some(current) => {
            let (a, b) = (value_to_raw(&candidate), value_to_raw(current));
            bson_canonical::compare_values(a.as_raw_bson_ref(), b.as_raw_bson_ref()) == want
        }
    };
    if better {
        *best = Some(candidate);
    }
}

pub(super) fn check_memory(name: &str, bytes: usize, bytes_max: usize) -> Result<(), QueryError> {
    if bytes <= bytes_max {
        return Ok(());
    }
    Err(QueryError::ExceededMemoryLimit(format!(
        "{name} used too much memory and cannot spill to disk. Used: {bytes} bytes. Memory \
         limit: {bytes_max} bytes"
    )))
}

/// The size of a value as a BSON element body, for the accumulator memory limit.
pub(super) fn value_size(value: &Bson) -> usize {
    match value {
        Bson::Double(_) | Bson::Int64(_) | Bson::DateTime(_) | Bson::Timestamp(_) => 8,
        Bson::Int32(_) => 4,
        Bson::Boolean(_) => 1,
        Bson::Null | Bson::Undefined | Bson::MinKey | Bson::MaxKey => 0,
        Bson::ObjectId(_) => 12,
        Bson::Decimal128(_) => 16,
        Bson::String(s) | Bson::Symbol(s) | Bson::JavaScriptCode(s) => s.len() + 5,
        Bson::Binary(b) => b.bytes.len() + 5,
        Bson::Document(doc) => {
            5 + doc
                .iter()
                .map(|(k, v)| k.len() + 2 + value_size(v))
                .sum::<usize>()
        }
        Bson::Array(items) => 5 + items.iter().map(|v| 8 + value_size(v)).sum::<usize>(),
        other => fields::show(other).len() + 16,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bson::{doc, rawdoc};

    fn docs(values: &[Bson]) -> Vec<Result<RawDocumentBuf, QueryError>> {
        values
            .iter()
            .map(|v| Ok(RawDocumentBuf::try_from(&doc! {"v": v.clone()}).expect("encodes")))
            .collect()
    }

    fn sum_of(values: &[Bson]) -> Bson {
        let spec = rawdoc! {"_id": null, "s": {"$sum": "$v"}};
        let group = Group::parse(RawBsonRef::Document(&spec), &crate::variables::NO_VARIABLES)
            .expect("parses");
        let out = group.run(docs(values).into_iter()).expect("runs");
        let doc = Document::try_from(out[0].as_ref()).expect("valid");
        doc.get("s").cloned().expect("has s")
    }

    #[test]
    fn sum_widens_int_to_long_to_double_by_the_total() {
        let max = Bson::Int32(i32::MAX);
        assert_eq!(sum_of(&[Bson::Int32(1), Bson::Int32(2)]), Bson::Int32(3));
        assert_eq!(
            sum_of(&[max.clone(), Bson::Int32(1)]),
            Bson::Int64(i64::from(i32::MAX) + 1)
        );
        // A long in the input makes the result a long even when it fits an int.
        assert_eq!(sum_of(&[Bson::Int64(1), Bson::Int32(1)]), Bson::Int64(2));
        assert_eq!(
            sum_of(&[Bson::Int64(i64::MAX), Bson::Int64(1)]),
            Bson::Double(9_223_372_036_854_775_808.0)
        );
        // Only the final total decides: an overflow that comes back fits.
        assert_eq!(
            sum_of(&[Bson::Int64(i64::MAX), Bson::Int64(1), Bson::Int64(-1)]),
            Bson::Int64(i64::MAX)
        );
        assert_eq!(
            sum_of(&[Bson::Int32(1), Bson::Double(0.5)]),
            Bson::Double(1.5)
        );
        assert_eq!(sum_of(&[Bson::String("x".into())]), Bson::Int32(0));
    }

    #[test]
    fn every_collecting_accumulator_has_the_memory_limit() {
        let values: Vec<Bson> = (0..3)
            .map(|i| Bson::Array(vec![Bson::String(format!("012345678{i}"))]))
            .collect();
        for (name, spec) in [
            ("$firstN", rawdoc! {"$firstN": {"input": "$v", "n": 5}}),
            ("$lastN", rawdoc! {"$lastN": {"input": "$v", "n": 5}}),
            ("$minN", rawdoc! {"$minN": {"input": "$v", "n": 5}}),
            ("$maxN", rawdoc! {"$maxN": {"input": "$v", "n": 5}}),
            (
                "$topN",
                rawdoc! {"$topN": {"output": "$v", "sortBy": {"v": 1}, "n": 5}},
            ),
            (
                "$bottomN",
                rawdoc! {"$bottomN": {"output": "$v", "sortBy": {"v": 1}, "n": 5}},
            ),
            ("$concatArrays", rawdoc! {"$concatArrays": "$v"}),
            ("$setUnion", rawdoc! {"$setUnion": "$v"}),
        ] {
            let mut whole = rawdoc! {"_id": null};
            whole.append(cstr("all"), spec);
            let mut group = Group::parse(
                RawBsonRef::Document(&whole),
                &crate::variables::NO_VARIABLES,
            )
            .expect("parses");
            group.bytes_max = 40;
            let e = group
                .run(docs(&values).into_iter())
                .expect_err("over the limit");
            assert_eq!(e.code(), 146, "{name}");
            assert!(e.to_string().starts_with(name), "{e}");
            // Under the limit the same group runs.
            group.bytes_max = 1000;
            group.run(docs(&values).into_iter()).expect("fits");
        }
        // With n = 1 a kept value is replaced, not added: the held bytes stay small.
        let spec = rawdoc! {"_id": null, "l": {"$lastN": {"input": "$v", "n": 1}},
        "b": {"$bottomN": {"output": "$v", "sortBy": {"v": 1}, "n": 1}}};
        let mut group = Group::parse(RawBsonRef::Document(&spec), &crate::variables::NO_VARIABLES)
            .expect("parses");
        // One value with its sort key is 43 bytes; two would be 86.
        group.bytes_max = 50;
        group
            .run(docs(&values).into_iter())
            .expect("one value held at a time");
    }

    fn cstr(name: &str) -> &bson::raw::CStr {
        <&bson::raw::CStr>::try_from(name).expect("a valid key")
    }

    #[test]
    fn push_past_its_memory_limit_fails_with_146() {
        let spec = rawdoc! {"_id": null, "all": {"$push": "$v"}};
        let mut group = Group::parse(RawBsonRef::Document(&spec), &crate::variables::NO_VARIABLES)
            .expect("parses");
        group.bytes_max = 20;
        let values: Vec<Bson> = (0..3).map(|_| Bson::String("0123456789".into())).collect();
        let e = group
            .run(docs(&values).into_iter())
            .expect_err("over the limit");
        assert_eq!(e.code(), 146);
        assert!(
            e.to_string().starts_with("$push used too much memory"),
            "{e}"
        );
    }
}
