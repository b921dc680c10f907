// Nothing to import: the module only links driver.c into tokenbroker-fuzz.
#pragma once
