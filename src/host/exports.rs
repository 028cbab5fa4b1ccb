//! `--export-dynamic` (`cc -rdynamic`): the image's global symbols made
//! visible to the shared libraries the program loads later. Plugins such
//! as Lua's C modules or QuickJS's native modules call back into the
//! program (`lua_pushstring`, `js_free`); natively they find those names in
//! the executable's dynamic symbol table. jitrun writes a small shared
//! object whose dynamic symbols are absolute (`SHN_ABS`, which the loader
//! does not relocate) at the image's addresses, and loads it from memory
//! with `RTLD_GLOBAL` before the program runs.

use std::collections::HashSet;

use anyhow::Result;
use object::elf;
use object::write::elf::{ProgramHeader, Sym, Writer};
use object::Endianness;

use crate::graph::model::{LinkGraph, SectionKind};
use crate::graph::resolve::{ResolvedSymbols, Target};

/// One exported symbol.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Export {
    pub name: String,
    pub address: u64,
    pub size: u64,
    pub is_function: bool,
}

/// The image's global definitions a native `-rdynamic` link would export:
/// not those any object declares hidden or internal (ELF gives a name the
/// most constraining visibility it is given anywhere), nor jitrun's own
/// runtime pieces. `address` gives a target's final address.
pub fn collect(graphs: &[LinkGraph], res: &ResolvedSymbols, address: impl Fn(Target) -> Option<u64>) -> Vec<Export> {
    let hidden: HashSet<&str> = graphs
        .iter()
        .flat_map(|g| g.hidden.iter().filter_map(|&s| g.symbols.get(s as usize)?.name.as_deref()))
        .collect();
    let mut exports = Vec::new();
    for (name, global) in res.globals.iter() {
        let is_function = match global.target {
            Target::Block { graph, block, .. } => {
                let graph = &graphs[graph as usize];
                if graph.name == crate::arch::runtime::RUNTIME_OBJECT {
                    continue;
                }
                let section = graph.blocks[block as usize].section;
                graph.sections[section as usize].kind == SectionKind::Code
            }
            Target::Ifunc(_) => true,
            _ => continue,
        };
        if hidden.contains(&**name) {
            continue;
        }
        let Some(address) = address(global.target) else { continue };
        exports.push(Export { name: name.to_string(), address, size: global.size, is_function });
    }
    exports
}

/// A shared object (`ET_DYN`) named `soname` whose dynamic symbol table
/// holds `exports` as absolute symbols, with the SysV hash table the loader
/// looks names up in. Its one `PT_LOAD` maps the file at offset 0, so file
/// offsets are its addresses. Dynamic symbol `i + 1` is `exports[i]`.
pub fn shared_object(soname: &str, exports: &[Export]) -> Result<Vec<u8>> {
    let mut buffer = Vec::new();
    let mut writer = Writer::new(Endianness::Little, true, &mut buffer);
    writer.reserve_file_header();
    writer.reserve_program_headers(3);
    writer.reserve_null_section_index();
    let soname_id = writer.add_dynamic_string(soname.as_bytes());
    let names: Vec<_> = exports.iter().map(|e| writer.add_dynamic_string(e.name.as_bytes())).collect();
    writer.reserve_null_dynamic_symbol_index();
    for _ in exports {
        writer.reserve_dynamic_symbol_index();
    }
    writer.reserve_dynsym_section_index();
    writer.reserve_dynstr_section_index();
    writer.reserve_hash_section_index();
    writer.reserve_dynamic_section_index();
    writer.reserve_shstrtab_section_index();
    let dynsym = writer.reserve_dynsym() as u64;
    let dynstr = writer.reserve_dynstr() as u64;
    let symbol_count = exports.len() as u32 + 1;
    let buckets = (symbol_count / 2).max(1);
    let hash = writer.reserve_hash(buckets, symbol_count) as u64;
    const DYNAMIC_ENTRIES: usize = 7;
    let dynamic = writer.reserve_dynamic(DYNAMIC_ENTRIES) as u64;
    let loaded_size = writer.reserved_len() as u64;
    writer.reserve_shstrtab();
    writer.reserve_section_headers();

    writer.write_file_header(&crate::graph::format::elf::file_header(crate::arch::HOST, elf::ET_DYN))?;
    writer.write_align_program_headers();
    let segment = |p_type, p_flags, offset, size, align| ProgramHeader {
        p_type,
        p_flags,
        p_offset: offset,
        p_vaddr: offset,
        p_paddr: offset,
        p_filesz: size,
        p_memsz: size,
        p_align: align,
    };
    writer.write_program_header(&segment(elf::PT_LOAD, elf::PF_R | elf::PF_W, 0, loaded_size, 0x1000));
    let dynamic_size = (DYNAMIC_ENTRIES * std::mem::size_of::<elf::Dyn64<Endianness>>()) as u64;
    writer.write_program_header(&segment(elf::PT_DYNAMIC, elf::PF_R | elf::PF_W, dynamic, dynamic_size, 8));
    // Without it the loader would make the stack executable for us.
    writer.write_program_header(&segment(elf::PT_GNU_STACK, elf::PF_R | elf::PF_W, 0, 0, 16));

    writer.write_null_dynamic_symbol();
    for (export, name) in exports.iter().zip(&names) {
        let kind = if export.is_function { elf::STT_FUNC } else { elf::STT_OBJECT };
        writer.write_dynamic_symbol(&Sym {
            name: Some(*name),
            section: None,
            st_info: (elf::STB_GLOBAL << 4) | kind,
            st_other: elf::STV_DEFAULT,
            st_shndx: elf::SHN_ABS,
            st_value: export.address,
            st_size: export.size,
        });
    }
    writer.write_dynstr();
    writer.write_hash(buckets, symbol_count, |i| (i > 0).then(|| elf::hash(exports[i as usize - 1].name.as_bytes())));
    let dynstr_size = writer.dynstr_len() as u64;
    writer.write_align_dynamic();
    writer.write_dynamic(elf::DT_HASH, hash);
    writer.write_dynamic(elf::DT_STRTAB, dynstr);
    writer.write_dynamic(elf::DT_SYMTAB, dynsym);
    writer.write_dynamic(elf::DT_STRSZ, dynstr_size);
    writer.write_dynamic(elf::DT_SYMENT, std::mem::size_of::<elf::Sym64<Endianness>>() as u64);
    writer.write_dynamic_string(elf::DT_SONAME, soname_id);
    writer.write_dynamic(elf::DT_NULL, 0);
    writer.write_shstrtab();
    writer.write_null_section_header();
    writer.write_dynsym_section_header(dynsym, 1);
    writer.write_dynstr_section_header(dynstr);
    writer.write_hash_section_header(hash);
    writer.write_dynamic_section_header(dynamic);
    writer.write_shstrtab_section_header();
    Ok(buffer)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Read back by goblin, an independent parser: a shared object with
    /// every export absolute at its address, the loader's tables in place.
    #[test]
    fn the_shared_object_holds_absolute_symbols() {
        let exports = vec![
            Export { name: "host_twice".into(), address: 0x7f00_1234_5000, size: 16, is_function: true },
            Export { name: "host_counter".into(), address: 0x7f00_1234_9000, size: 4, is_function: false },
        ];
        let bytes = shared_object("t.so", &exports).unwrap();
        let elf = goblin::elf::Elf::parse(&bytes).unwrap();
        assert_eq!(elf.header.e_type, goblin::elf::header::ET_DYN);
        assert_eq!(elf.soname, Some("t.so"));
        let found: Vec<(String, u64, u64, u8, usize)> = elf
            .dynsyms
            .iter()
            .skip(1)
            .map(|s| (elf.dynstrtab[s.st_name].to_string(), s.st_value, s.st_size, s.st_type(), s.st_shndx))
            .collect();
        assert_eq!(
            found,
            vec![
                ("host_twice".into(), 0x7f00_1234_5000, 16, goblin::elf::sym::STT_FUNC, elf::SHN_ABS as usize),
                ("host_counter".into(), 0x7f00_1234_9000, 4, goblin::elf::sym::STT_OBJECT, elf::SHN_ABS as usize),
            ]
        );
        let types: Vec<u32> = elf.program_headers.iter().map(|p| p.p_type).collect();
        assert_eq!(types, [elf::PT_LOAD, elf::PT_DYNAMIC, elf::PT_GNU_STACK]);
        let dynamic = elf.dynamic.expect("a dynamic section");
        assert!(dynamic.dyns.iter().any(|d| d.d_tag == u64::from(elf::DT_HASH)));
    }
}
