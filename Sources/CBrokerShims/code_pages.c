// The code pages of the whole process, given back after a refresh. A refresh touches about 5 MiB
// of library code and constants (OpenSSL, GnuTLS, krb5, ...) and a few MiB of the program's own
// (the providers, the store, the command line) that the agent's warm answers, kept answers given
// on the socket loop's thread, never use until the next refresh, an hour later.
// madvise(MADV_DONTNEED) on those read-only file mappings drops them from the process's resident
// set. They stay in the page cache, so what the next request runs is mapped again with minor
// faults. Only segments that are never written qualify: PT_LOAD and not writable, of a file-backed
// object (the program itself, or a path: not the vDSO) without text relocations, and wholly
// from the file; for such pages MADV_DONTNEED loses nothing but what a debugger or a uprobe
// patched into them (breakpoints set in the agent's code before a refresh are gone after it;
// the agent forbids ptrace by others, PR_SET_DUMPABLE=0). (MADV_PAGEOUT would be no help: it skips pages other processes map
// too, i.e. most of them.)
#include "CBrokerShims.h"
#include "code_pages.h"
#include <elf.h>
#include <link.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

static atomic_int used;

static int has_text_relocations(const struct dl_phdr_info *info) {
  for (int i = 0; i < info->dlpi_phnum; i++) {
    if (info->dlpi_phdr[i].p_type != PT_DYNAMIC) continue;
    for (const ElfW(Dyn) *d = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr); d->d_tag != DT_NULL; d++) {
      if (d->d_tag == DT_TEXTREL || (d->d_tag == DT_FLAGS && (d->d_un.d_val & DF_TEXTREL))) return 1;
    }
  }
  return 0;
}

struct release { long bytes; int seen; };

static int release_object(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  struct release *release = data;
  // The program is the first object; every other file-backed one has a path (the vDSO has none,
  // and its name may be empty too).
  int program = release->seen++ == 0;
  int file_backed = program || (info->dlpi_name != NULL && info->dlpi_name[0] == '/');
  if (!file_backed || has_text_relocations(info)) return 0;
  uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *segment = &info->dlpi_phdr[i];
    // A read-only segment with memory past its file part had its last file page zeroed past
    // p_filesz at load (a private copy): dropping that page would bring back the file's bytes.
    if (segment->p_type != PT_LOAD || (segment->p_flags & PF_W) || segment->p_memsz != segment->p_filesz) continue;
    // A segment that is not writable (code, or read-only data: RELRO lies in a writable one) is
    // mapped on pages of its own, which nothing ever writes.
    uintptr_t start = (info->dlpi_addr + segment->p_vaddr) & ~(page - 1);
    uintptr_t end = (info->dlpi_addr + segment->p_vaddr + segment->p_memsz + page - 1) & ~(page - 1);
    if (madvise((void *)start, end - start, MADV_DONTNEED) == 0) release->bytes += (long)(end - start);
  }
  return 0;
}

void cbroker_code_pages_used(void) { atomic_store_explicit(&used, 1, memory_order_release); }

long cbroker_code_pages_release(void) {
  if (!atomic_exchange_explicit(&used, 0, memory_order_acq_rel)) return 0;
  struct release release = {0, 0};
  dl_iterate_phdr(release_object, &release);
  return release.bytes;
}
