//! Checks of the house and its documents rather than of a feature: the house rules on `src/`
//! (`house`), links in the docs (`docs`), the README's block run as written (`readme`), how much
//! help says (`help`), and every JSON document against docs/json.md's tables (`json`).

mod docs;
mod help;
mod house;
mod json;
mod readme;
