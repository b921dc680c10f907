// Private to CBrokerShims: the code pages of the libraries one dlopen brought in (code_pages.c).
#ifndef CBROKER_CODE_PAGES_H
#define CBROKER_CODE_PAGES_H

/// Notes the objects loaded now; call just before the dlopen whose tree is to be tracked.
void cbroker_code_pages_before(void);
/// Records the read-only segments (code, constants) of every object loaded since `cbroker_code_pages_before`.
void cbroker_code_pages_after(void);
/// Marks the recorded code as used since the last release (a transfer ran).
void cbroker_code_pages_used(void);

#endif
