// The code pages of libcurl's tree, given back after use. A refresh touches about 5 MiB of
// library code and constants (OpenSSL, GnuTLS, krb5, ...) that the agent's warm answers never use
// until the next refresh, an hour later; madvise(MADV_DONTNEED) on those read-only file mappings
// drops them from the process's resident set. They stay in the page cache, so the next request
// maps them again with minor faults. Only segments that are never written qualify: PT_LOAD and
// not writable, of an object without text relocations; for such pages MADV_DONTNEED loses nothing.
// (MADV_PAGEOUT would be no help: it skips pages other processes map too, i.e. most of them.)
#include "CBrokerShims.h"
#include "code_pages.h"
#include <elf.h>
#include <link.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

enum { max_objects = 256, max_ranges = 128 };
static uintptr_t before[max_objects];
static int before_count;
static struct { uintptr_t start, length; } ranges[max_ranges];
static int range_count;
static atomic_int used;

static int note_before(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size, (void)data;
  if (before_count < max_objects) before[before_count++] = info->dlpi_addr;
  return 0;
}

void cbroker_code_pages_before(void) {
  before_count = 0;
  dl_iterate_phdr(note_before, NULL);
}

static int has_text_relocations(const struct dl_phdr_info *info) {
  for (int i = 0; i < info->dlpi_phnum; i++) {
    if (info->dlpi_phdr[i].p_type != PT_DYNAMIC) continue;
    for (const ElfW(Dyn) *d = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr); d->d_tag != DT_NULL; d++) {
      if (d->d_tag == DT_TEXTREL || (d->d_tag == DT_FLAGS && (d->d_un.d_val & DF_TEXTREL))) return 1;
    }
  }
  return 0;
}

static int note_after(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size, (void)data;
  for (int i = 0; i < before_count; i++) {
    if (before[i] == info->dlpi_addr) return 0;
  }
  if (has_text_relocations(info)) return 0;
  uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
  for (int i = 0; i < info->dlpi_phnum && range_count < max_ranges; i++) {
    const ElfW(Phdr) *segment = &info->dlpi_phdr[i];
    if (segment->p_type != PT_LOAD || (segment->p_flags & PF_W)) continue;
    // A segment that is not writable (code, or read-only data: RELRO lies in a writable one) is
    // mapped on pages of its own, which nothing ever writes.
    uintptr_t start = (info->dlpi_addr + segment->p_vaddr) & ~(page - 1);
    uintptr_t end = (info->dlpi_addr + segment->p_vaddr + segment->p_memsz + page - 1) & ~(page - 1);
    ranges[range_count].start = start;
    ranges[range_count].length = end - start;
    range_count++;
  }
  return 0;
}

void cbroker_code_pages_after(void) {
  range_count = 0;
  dl_iterate_phdr(note_after, NULL);
}

void cbroker_code_pages_used(void) { atomic_store_explicit(&used, 1, memory_order_release); }

long cbroker_curl_release_code(void) {
  if (!atomic_exchange_explicit(&used, 0, memory_order_acq_rel)) return 0;
  long released = 0;
  for (int i = 0; i < range_count; i++) {
    if (madvise((void *)ranges[i].start, ranges[i].length, MADV_DONTNEED) == 0) released += (long)ranges[i].length;
  }
  return released;
}
