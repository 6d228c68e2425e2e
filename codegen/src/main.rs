fn main() {
    let paths: Vec<String> = std::env::args().skip(1).collect();
    let set = kafka_codegen::model::SchemaSet::load(&paths).unwrap();
    for d in &set.diagnostics { println!("{d}"); }
    println!("{} schemas", set.schemas.len());
}
