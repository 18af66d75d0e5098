//! Field paths of checks (`line_items.amount`). The derive resolves the first
//! hop itself; every deeper hop goes through [`Hop`], told by each type's
//! [`Audited`] impl (the derive writes one per type), so whether a hop is a
//! collection is known to the type system and a misuse is a compile error on
//! the user's token.

use super::Audited;

/// One card of a path: it names one value so far.
#[derive(Debug, Clone, Copy, Default)]
pub struct One;

/// One card of a path: it has passed through a collection.
#[derive(Debug, Clone, Copy, Default)]
pub struct Many;

/// The [`Audited::Card`] of a type that derives `Extractable`: it is itself
/// the struct a step into it reaches (`Target = Self`). A path through it
/// names one value, as through [`One`]; but such a value needs no `visit`
/// of its own, since the default one (see [`DefaultVisit`]) visits the value
/// itself, and the card makes the type `Extractable` (the one blanket impl).
/// That is two items fewer for every derived type to compile.
#[derive(Debug, Clone, Copy, Default)]
pub struct Own;

/// The [`Audited::Card`] of a derived enum whose JSON is always an object
/// (internally or adjacently tagged): like [`Stop`], no check path steps
/// into it (its variants hold different fields), but it can be the
/// top-level type of an extraction (`ObjectRoot`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Tagged;

/// The [`Audited::Card`] of a derived type whose JSON is not always an
/// object (a unit-only or externally tagged enum, a newtype, a tuple
/// struct): like [`Stop`], no check path steps into it, and it cannot be
/// the top-level type of an extraction (its name says why in the error
/// that asking for its tool gives).
#[derive(Debug, Clone, Copy, Default)]
pub struct NotAnObject;

/// How many values a path names so far; combined hop by hop with [`Or`].
/// [`Stop`] is none: a value whose `Audited::Card` it is cannot be stepped into.
pub trait Card: Copy + Default {
    /// Whether the path so far names one value (so an absent `Option` on it
    /// makes the whole aggregate absent, not just one element).
    const ONE: bool;
}
impl Card for One {
    const ONE: bool = true;
}
impl Card for Many {
    const ONE: bool = false;
}
impl Card for Own {
    const ONE: bool = true;
}

/// The card of a path after one more hop.
pub trait Or<B> {
    /// `Many` if either side is.
    type Out: Card;
}
// The path so far (left) with the card of the next hop (right). A path
// starts at `One`, so `Own` only ever stands on the right.
macro_rules! or_table {
    ($($a:ident + $b:ident => $out:ident;)*) => {$(
        impl Or<$b> for $a {
            type Out = $out;
        }
    )*};
}
or_table! {
    One + One => One;
    One + Own => One;
    One + Many => Many;
    Many + One => Many;
    Many + Own => Many;
    Many + Many => Many;
}

/// Satisfied by a path that names one value.
#[diagnostic::on_unimplemented(
    message = "this check path passes through a collection, so it names many values",
    label = "a collection: use the path inside `sum`, `count`, `min`, `max` or `unique`"
)]
pub trait IsOne {}
impl IsOne for One {}
impl IsOne for Own {}

/// Satisfied by a path that passes through a collection.
#[diagnostic::on_unimplemented(
    message = "this aggregate's path passes through no collection",
    label = "`sum`, `count`, `min`, `max` and `unique` need a path through a collection (`Vec`, `VecDeque`, array, map)",
    note = "use the field directly, or `len(...)` for the length of text"
)]
pub trait IsMany {}
impl IsMany for Many {}

/// How many values a step into a value reaches, as a [`Card`] or [`Stop`]:
/// what [`Audited::Card`] is. Lets a container say "many, if its elements
/// can be stepped into at all".
pub trait Reach {
    /// The reach through a collection of such values.
    type Plural: Reach + VisitsNothing;
    /// The reach through an `Option`, `Box` or other [`Wrapper`](super::Wrapper)
    /// of such a value: as far, but the wrapper is not its own target.
    type Wrapped: Reach + VisitsNothing;
}
macro_rules! reach_table {
    ($($card:ident: plural $plural:ident, wrapped $wrapped:ident;)*) => {$(
        impl Reach for $card {
            type Plural = $plural;
            type Wrapped = $wrapped;
        }
    )*};
}
reach_table! {
    One: plural Many, wrapped One;
    Many: plural Many, wrapped Many;
    Own: plural Many, wrapped One;
    Stop: plural Stop, wrapped Stop;
    Tagged: plural Stop, wrapped Stop;
    NotAnObject: plural Stop, wrapped Stop;
}

/// What [`Audited::visit`] does when an impl does not say, chosen by the
/// value's `Card`: a value whose card is [`Own`] visits itself; any other
/// visits nothing (containers say what they reach in their own `visit`).
pub trait DefaultVisit<T: Audited + ?Sized> {
    /// Calls `f` on what a step into `value` reaches.
    fn visit<'a, F: FnMut(&'a T::Target)>(value: &'a T, f: &mut F);
}

impl<T: Audited<Target = T>> DefaultVisit<T> for Own {
    fn visit<'a, F: FnMut(&'a T)>(value: &'a T, f: &mut F) {
        f(value)
    }
}

/// The cards whose default `visit` reaches nothing: every card but [`Own`].
pub trait VisitsNothing {}
impl VisitsNothing for One {}
impl VisitsNothing for Many {}
impl VisitsNothing for Stop {}
impl VisitsNothing for Tagged {}
impl VisitsNothing for NotAnObject {}

impl<C: VisitsNothing, T: Audited + ?Sized> DefaultVisit<T> for C {
    fn visit<'a, F: FnMut(&'a T::Target)>(_value: &'a T, _f: &mut F) {}
}

/// The [`Audited::Card`] of a value a check path cannot step into: text,
/// numbers, tuples. It is no [`Card`], so such a value is no [`Hop`].
#[derive(Debug, Clone, Copy, Default)]
pub struct Stop;

/// A value a check path can step into: a type that derives `Extractable`, or
/// an `Option`, `Box` or `Vec` of one. What a step reaches is told by the
/// value's [`Audited`] impl (`Target`, `Card`, `visit`), so a derived type
/// writes one impl for the walk and the paths both; this trait only names
/// the values whose `Card` is a [`Card`].
#[diagnostic::on_unimplemented(
    message = "a check path cannot pass through `{Self}`: it is not a struct with named fields that derives `Extractable`",
    label = "this step needs a struct that derives `Extractable`",
    note = "every type a check path passes through must be a struct with named fields that `#[derive(Extractable)]` (or an `Option`, `Box`, `Arc`, `Rc`, `Vec`, `VecDeque`, array, slice, set or map of one); an enum's variants hold different fields, so put the check on the struct variant, and a newtype's check is a `#[check(with = ...)]` on it"
)]
pub trait Hop: Audited<Card: Card> {}

// Not recommended: an error then names the value the path cannot step into
// (with `Hop`'s message), not the `Audited` or `Card` bound behind it.
#[diagnostic::do_not_recommend]
impl<T: Audited + ?Sized> Hop for T where T::Card: Card {}

/// A collection a check path can pass through: its elements, in order (a
/// map's values, in its iteration order).
pub trait Collection {
    /// The element type.
    type Item;
    /// The elements.
    fn items(&self) -> impl Iterator<Item = &Self::Item>;
}

macro_rules! collection {
    ($([$($generics:tt)*] $ty:ty => $items:ident;)*) => {$(
        impl<$($generics)*> Collection for $ty {
            type Item = T;
            fn items(&self) -> impl Iterator<Item = &T> {
                self.$items()
            }
        }
    )*};
}

collection! {
    [T] Vec<T> => iter;
    [T] std::collections::VecDeque<T> => iter;
    [T] std::collections::LinkedList<T> => iter;
    [T, const N: usize] [T; N] => iter;
    [T] [T] => iter;
    [T] std::collections::BTreeSet<T> => iter;
    [T, S] std::collections::HashSet<T, S> => iter;
    [T] std::collections::BinaryHeap<T> => iter;
    [K, T] std::collections::BTreeMap<K, T> => values;
    [K, T, S] std::collections::HashMap<K, T, S> => values;
}

/// Demands that a check path may step into `H` (the error users see when a
/// type on the path does not derive `Extractable`).
pub fn require_hop<H: Hop + ?Sized>(_: &H) {}

/// One step of a check path. When the value is a [`Hop`], [`StepHop`]
/// applies; otherwise [`StepAny`] steps into the value itself, so the one
/// error `require_hop` reports is not followed by a cascade of others.
pub struct Step<'a, T>(pub &'a T);

/// A step into a type that derives `Extractable` (or an `Option`, `Box`, `Vec` of one).
pub trait StepHop<'a> {
    /// The struct the next step names a field of.
    type Target: 'a;
    /// Whether this step passes through a collection.
    type Card: Card;
    /// The struct inside, for a single-valued path.
    fn single(&self) -> Option<&'a Self::Target>
    where
        Self::Card: IsOne;
}

impl<'a, T: Hop> StepHop<'a> for &Step<'a, T> {
    type Target = T::Target;
    type Card = T::Card;
    fn single(&self) -> Option<&'a T::Target>
    where
        Self::Card: IsOne,
    {
        self.0.get()
    }
}

/// A step of an aggregate's path into a [`Hop`], given the card `C` of the path so far.
pub trait StepHopEach<'a, C> {
    /// The struct the next step names a field of.
    type Target: 'a;
    /// The card of the path after this step.
    type Out: Card;
    /// `f` on every struct inside; `true` when the value is an absent
    /// `Option` where the path names one value, which makes the aggregate absent.
    fn step_each<F: FnMut(&'a Self::Target, Self::Out)>(&self, card: C, f: F) -> bool;
}

impl<'a, T: Hop, C: Card + Or<T::Card>> StepHopEach<'a, C> for &Step<'a, T> {
    type Target = T::Target;
    type Out = <C as Or<T::Card>>::Out;
    fn step_each<F: FnMut(&'a T::Target, Self::Out)>(&self, _card: C, mut f: F) -> bool {
        if C::ONE && self.0.is_absent() {
            return true;
        }
        self.0.visit(&mut |x| f(x, Default::default()));
        false
    }
}

/// A step into a type that is not a [`Hop`]: only reached after
/// `require_hop` has reported the error.
pub trait StepAny<'a> {
    /// The value itself.
    type Target: 'a;
    /// The value itself.
    fn single(&self) -> Option<&'a Self::Target>;
    /// `f` on the value itself.
    fn step_each<C: Card, F: FnMut(&'a Self::Target, C)>(&self, card: C, f: F) -> bool;
}

impl<'a, T> StepAny<'a> for Step<'a, T> {
    type Target = T;
    fn single(&self) -> Option<&'a T> {
        Some(self.0)
    }
    fn step_each<C: Card, F: FnMut(&'a T, C)>(&self, card: C, mut f: F) -> bool {
        f(self.0, card);
        false
    }
}

/// The last step of an aggregate's path must have passed through a collection.
pub fn require_many<C: IsMany>(_card: C) {}

/// The last value of a path, for the single-valued (`Leaf`) and aggregate
/// (`LeafEach`) contexts. Which impl applies is chosen by method resolution
/// on the concrete type (autoref specialisation): `Vec` first, then
/// `Option`, then anything.
pub struct Leaf<'a, T>(pub &'a T);

/// The last value of a single-valued path, when it is an `Option`: absent on `None`.
pub trait LeafOption<'a> {
    /// The value inside.
    type Out: ?Sized + 'a;
    /// The value, if present.
    fn value(&self) -> Option<&'a Self::Out>;
}

impl<'a, X> LeafOption<'a> for &Leaf<'a, Option<X>> {
    type Out = X;
    fn value(&self) -> Option<&'a X> {
        self.0.as_ref()
    }
}

/// The last value of a single-valued path, for any other type.
pub trait LeafPlain<'a> {
    /// The value.
    type Out: ?Sized + 'a;
    /// The value.
    fn value(&self) -> Option<&'a Self::Out>;
}

impl<'a, X> LeafPlain<'a> for Leaf<'a, X> {
    type Out = X;
    fn value(&self) -> Option<&'a X> {
        Some(self.0)
    }
}

/// The last value of an aggregate's path, with the path's card so far.
pub struct LeafEach<'a, T, C>(pub &'a T, pub C);

/// A collection of `Option`s at the end of an aggregate's path: each present element.
pub trait LeafEachManyOptions<'a> {
    /// The element type.
    type Item: 'a;
    /// Calls `f` on each present element.
    fn each<F: FnMut(&'a Self::Item, Many)>(&self, f: F) -> bool;
}

impl<'a, X: 'a, Coll: Collection<Item = Option<X>>, C> LeafEachManyOptions<'a> for &&&&LeafEach<'a, Coll, C> {
    type Item = X;
    fn each<F: FnMut(&'a X, Many)>(&self, mut f: F) -> bool {
        for x in self.0.items().flatten() {
            f(x, Many)
        }
        false
    }
}

/// An optional collection at the end of an aggregate's path: each element, or
/// nothing (absent, where the path names one value) when it is `None`.
pub trait LeafEachOptionalMany<'a> {
    /// The element type.
    type Item: 'a;
    /// Calls `f` on each element.
    fn each<F: FnMut(&'a Self::Item, Many)>(&self, f: F) -> bool;
}

impl<'a, Coll: Collection + 'a, C: Card> LeafEachOptionalMany<'a> for &&&LeafEach<'a, Option<Coll>, C>
where
    Coll::Item: 'a,
{
    type Item = Coll::Item;
    fn each<F: FnMut(&'a Coll::Item, Many)>(&self, mut f: F) -> bool {
        match self.0 {
            None => C::ONE,
            Some(coll) => {
                for x in coll.items() {
                    f(x, Many)
                }
                false
            }
        }
    }
}

/// A collection at the end of an aggregate's path: each element.
pub trait LeafEachMany<'a> {
    /// The element type.
    type Item: 'a;
    /// Calls `f` on each element.
    fn each<F: FnMut(&'a Self::Item, Many)>(&self, f: F) -> bool;
}

impl<'a, Coll: Collection, C> LeafEachMany<'a> for &&LeafEach<'a, Coll, C>
where
    Coll::Item: 'a,
{
    type Item = Coll::Item;
    fn each<F: FnMut(&'a Coll::Item, Many)>(&self, mut f: F) -> bool {
        for x in self.0.items() {
            f(x, Many)
        }
        false
    }
}

/// An `Option` at the end of an aggregate's path: the value when present.
pub trait LeafEachOption<'a> {
    /// The value type.
    type Item: 'a;
    /// The path's card.
    type Card;
    /// Calls `f` on the value if present.
    fn each<F: FnMut(&'a Self::Item, Self::Card)>(&self, f: F) -> bool;
}

impl<'a, X, C: Card> LeafEachOption<'a> for &LeafEach<'a, Option<X>, C> {
    type Item = X;
    type Card = C;
    fn each<F: FnMut(&'a X, C)>(&self, mut f: F) -> bool {
        match self.0 {
            Some(x) => {
                f(x, self.1);
                false
            }
            None => C::ONE,
        }
    }
}

/// Any other value at the end of an aggregate's path.
pub trait LeafEachPlain<'a> {
    /// The value type.
    type Item: 'a;
    /// The path's card.
    type Card;
    /// Calls `f` on the value.
    fn each<F: FnMut(&'a Self::Item, Self::Card)>(&self, f: F) -> bool;
}

impl<'a, X, C: Card> LeafEachPlain<'a> for LeafEach<'a, X, C> {
    type Item = X;
    type Card = C;
    fn each<F: FnMut(&'a X, C)>(&self, mut f: F) -> bool {
        f(self.0, self.1);
        false
    }
}

// The probes as derived code writes them: each one reference deeper than
// the deepest impl of its family above, so method resolution tries the
// impls in order. The depths live here, beside the impls, and nowhere else.

/// One step of a check path: `probe_step!(&value.field).single()`.
#[doc(hidden)]
#[macro_export]
macro_rules! __probe_step {
    ($value:expr) => {
        (&&$crate::__private_v2::Step($value))
    };
}

/// The last value of a single-valued path: `probe_leaf!(&value.field).value()`.
#[doc(hidden)]
#[macro_export]
macro_rules! __probe_leaf {
    ($value:expr) => {
        (&&$crate::__private_v2::Leaf($value))
    };
}

/// The last value of an aggregate's path: `probe_leaf_each!(&value.field, card).each(...)`.
#[doc(hidden)]
#[macro_export]
macro_rules! __probe_leaf_each {
    ($value:expr, $card:expr) => {
        (&&&&&$crate::__private_v2::LeafEach($value, $card))
    };
}
