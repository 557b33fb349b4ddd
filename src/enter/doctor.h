/* `enter-devroot doctor`: what this kernel allows, and which mode `auto` will use. */
#pragma once

/* Prints the report; returns 0 when some mode works, 125 otherwise. */
int doctor_run (void);
