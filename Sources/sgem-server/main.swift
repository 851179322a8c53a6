#if canImport(Glibc)
import Glibc
#endif
import SGEMApp

// The whole program: run the command line and exit with its code.
let code = await Application.main(Array(CommandLine.arguments.dropFirst()), environment: processEnvironment())
exit(code)
