//! BSON values as mongod prints them in error messages (`BSONObj::toString`):
//! `{ a: 1, b: "x", c: [ 1, 2 ] }`, doubles with a fraction part (`1.0`), `{}` and `[]`.

use bson::{Bson, Document};

/// A document as mongod's `BSONObj::toString` prints it.
pub fn document(doc: &Document) -> String {
    let mut out = String::new();
    write_document(doc, &mut out);
    out
}

/// One value as mongod prints it inside a document.
pub fn value(value: &Bson) -> String {
    let mut out = String::new();
    write_value(value, &mut out);
    out
}

/// mongod's `typeName`: the name `$type` and error messages use for a BSON type.
pub fn type_name(value: &Bson) -> &'static str {
    match value {
        Bson::Double(_) => "double",
        Bson::String(_) => "string",
        Bson::Document(_) => "object",
        Bson::Array(_) => "array",
        Bson::Binary(_) => "binData",
        Bson::Undefined => "undefined",
        Bson::ObjectId(_) => "objectId",
        Bson::Boolean(_) => "bool",
        Bson::DateTime(_) => "date",
        Bson::Null => "null",
        Bson::RegularExpression(_) => "regex",
        Bson::DbPointer(_) => "dbPointer",
        Bson::JavaScriptCode(_) => "javascript",
        Bson::Symbol(_) => "symbol",
        Bson::JavaScriptCodeWithScope(_) => "javascriptWithScope",
        Bson::Int32(_) => "int",
        Bson::Timestamp(_) => "timestamp",
        Bson::Int64(_) => "long",
        Bson::Decimal128(_) => "decimal",
        Bson::MinKey => "minKey",
        Bson::MaxKey => "maxKey",
    }
}

fn write_document(doc: &Document, out: &mut String) {
    if doc.is_empty() {
        out.push_str("{}");
        return;
    }
    out.push_str("{ ");
    for (index, (key, item)) in doc.iter().enumerate() {
        if index > 0 {
            out.push_str(", ");
        }
        out.push_str(key);
        out.push_str(": ");
        write_value(item, out);
    }
    out.push_str(" }");
}

fn write_value(value: &Bson, out: &mut String) {
    match value {
        Bson::Double(x) => out.push_str(&double(*x)),
        Bson::String(s) => {
            out.push('"');
            out.push_str(s);
            out.push('"');
        }
        Bson::Document(doc) => write_document(doc, out),
        Bson::Array(items) => {
            if items.is_empty() {
                out.push_str("[]");
                return;
            }
            out.push_str("[ ");
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    out.push_str(", ");
                }
                write_value(item, out);
            }
            out.push_str(" ]");
        }
        Bson::Boolean(b) => out.push_str(if *b { "true" } else { "false" }),
        Bson::Null => out.push_str("null"),
        Bson::Undefined => out.push_str("undefined"),
        Bson::Int32(n) => out.push_str(&n.to_string()),
        Bson::Int64(n) => out.push_str(&n.to_string()),
        Bson::ObjectId(id) => out.push_str(&format!("ObjectId('{id}')")),
        Bson::DateTime(date) => out.push_str(&format!("new Date({})", date.timestamp_millis())),
        Bson::RegularExpression(regex) => {
            out.push_str(&format!("/{}/{}", regex.pattern, regex.options));
        }
        Bson::Decimal128(d) => out.push_str(&format!("NumberDecimal(\"{d}\")")),
        Bson::MinKey => out.push_str("MinKey"),
        Bson::MaxKey => out.push_str("MaxKey"),
        Bson::Timestamp(ts) => out.push_str(&format!("Timestamp({}, {})", ts.time, ts.increment)),
        other => out.push_str(&other.to_string()),
    }
}

/// mongod prints a double with a whole value as `1.0` and others in their shortest form.
fn double(x: f64) -> String {
    if x.is_nan() {
        "nan.0".to_owned()
    } else if x.is_infinite() {
        if x > 0.0 { "inf.0" } else { "-inf.0" }.to_owned()
    } else if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{x:.1}")
    } else {
        format!("{x}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bson::doc;

    #[test]
    fn documents_print_as_mongod_prints_them() {
        let spec =
            doc! {"key": {"a": 1, "b": -1.0}, "name": "a_1", "e": [], "f": {}, "g": [1, "x"]};
        assert_eq!(
            document(&spec),
            r#"{ key: { a: 1, b: -1.0 }, name: "a_1", e: [], f: {}, g: [ 1, "x" ] }"#
        );
        assert_eq!(value(&Bson::Double(1.5)), "1.5");
        assert_eq!(type_name(&Bson::Int64(1)), "long");
    }
}
