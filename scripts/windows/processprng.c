/* bcryptprimitives.dll for Wine 8: Rust's std (1.96) imports ProcessPrng from it, and Wine 8
 * does not ship it, so every Rust .exe would exit with code 53 before main. This forwards to
 * RtlGenRandom (SystemFunction036 in advapi32), which Wine has. Test prefixes only. */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len) {
    while (len > 0) {
        ULONG chunk = len > 0x40000000 ? 0x40000000 : (ULONG)len;
        if (!SystemFunction036(data, chunk)) return FALSE;
        data += chunk;
        len -= chunk;
    }
    return TRUE;
}
