// Private to CBrokerShims: the process's code pages, given back after a transfer (code_pages.c).
#ifndef CBROKER_CODE_PAGES_H
#define CBROKER_CODE_PAGES_H

/// Marks the code as used since the last release (a transfer ran); curl_library.c calls it.
void cbroker_code_pages_used(void);

#endif
