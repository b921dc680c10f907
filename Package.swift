// swift-tools-version:6.0
// tokenbroker: a credential helper for Azure AD, Google and SharePoint Online on Linux.
// Target graph and rules: see README.md ("Layout") and the architecture notes there.
import PackageDescription

let strict: [SwiftSetting] = [.swiftLanguageMode(.v6)]

let package = Package(
  name: "tokenbroker",
  products: [
    .executable(name: "tokenbroker", targets: ["tokenbroker"]),
    .executable(name: "tokenbroker-core", targets: ["tokenbroker-core"]),
  ],
  targets: [
    // C layer: headers and pkg-config flags only; every shim lives in CBrokerShims.
    .systemLibrary(
      name: "CLibsecret", pkgConfig: "libsecret-1", providers: [.apt(["libsecret-1-dev"])]),
    // Headers only, no pkgConfig (it would add -lcurl): the core loads libcurl at its first request.
    .systemLibrary(name: "CLibcurl", providers: [.apt(["libcurl4-openssl-dev"])]),
    .systemLibrary(
      name: "CLibqrencode", pkgConfig: "libqrencode", providers: [.apt(["libqrencode-dev"])]),
    .systemLibrary(
      name: "CLibsodium", pkgConfig: "libsodium", providers: [.apt(["libsodium-dev"])]),
    .target(
      name: "CBrokerShims", dependencies: ["CLibsecret", "CLibcurl"],
      cSettings: [.define("_GNU_SOURCE")]),
    // The front's process start: argc and argv from glibc's `.init_array` call, for CommandLine.
    .target(name: "CFrontStart"),

    // Glibc only: the one home of small system mechanisms (errno and its text, the EINTR retry,
    // writing a whole buffer, lock files) that every layer, the front too, uses.
    .target(name: "BrokerBasics", swiftSettings: strict),
    // Stdlib and Glibc only: the key=value codec shared by the git helper and the agent.
    .target(name: "BrokerWire", dependencies: ["BrokerBasics"], swiftSettings: strict),
    // Models, policies and the protocols every adapter implements. No C, no I/O.
    .target(name: "BrokerCore", dependencies: ["BrokerWire"], swiftSettings: strict),

    // Adapters: each owns exactly one outside system.
    .target(
      name: "BrokerHTTP", dependencies: ["BrokerBasics", "BrokerCore", "CBrokerShims", "CLibcurl"],
      swiftSettings: strict),
    .target(
      name: "BrokerStore", dependencies: ["BrokerBasics", "BrokerCore", "BrokerWire", "CBrokerShims", "CLibsecret", "CLibsodium"],
      swiftSettings: strict),
    .target(name: "BrokerProviders", dependencies: ["BrokerCore"], swiftSettings: strict),
    .target(
      name: "BrokerSystem", dependencies: ["BrokerBasics", "BrokerCore", "BrokerWire", "CBrokerShims", "CLibqrencode"], swiftSettings: strict),
    // The resident agent: socket server, peer check, in-memory token cache, single-flight refresh,
    // and what it does with each request; a command's argv is run through one function the CLI gives.
    .target(
      name: "BrokerAgent",
      dependencies: [
        "BrokerBasics", "BrokerCore", "BrokerWire", "BrokerProviders", "BrokerStore", "BrokerSystem", "CBrokerShims",
      ],
      swiftSettings: strict),

    // The full program as a library, and its three-line executable.
    .target(
      name: "BrokerCLI",
      dependencies: [
        "BrokerBasics", "BrokerCore", "BrokerWire", "BrokerHTTP", "BrokerStore", "BrokerProviders", "BrokerSystem",
        "BrokerAgent",
      ],
      swiftSettings: strict),
    .executableTarget(name: "tokenbroker-core", dependencies: ["BrokerCLI"], swiftSettings: strict),
    // The small front: Wire only (no Foundation, no C library but glibc), linked fully static
    // (`-static-executable`: the Swift runtime and glibc inside, no dynamic loader at start), in
    // every configuration and whatever the build flags, so git, curl and build tools that call it
    // hundreds of times pay no loading (architecture.md, "Why two executables").
    // lld with scripts/front-order.txt (scripts/front-order writes it) lays the code and data a
    // warm call touches on few pages: fewer page faults per call. A stale list costs speed only.
    .executableTarget(
      name: "tokenbroker", dependencies: ["BrokerBasics", "BrokerWire", "CFrontStart"], swiftSettings: strict,
      linkerSettings: [
        .unsafeFlags([
          "-static-executable", "-use-ld=lld",
          "-Xlinker", "--symbol-ordering-file=\(Context.packageDirectory)/scripts/front-order.txt",
          "-Xlinker", "--no-warn-symbol-ordering",
        ])
      ]),

    // Fakes shared by the unit tests.
    .target(name: "BrokerTestSupport", dependencies: ["BrokerCore"], swiftSettings: strict),

    .testTarget(name: "BrokerBasicsTests", dependencies: ["BrokerBasics"], swiftSettings: strict),
    .testTarget(name: "BrokerWireTests", dependencies: ["BrokerWire", "CBrokerShims"], swiftSettings: strict),
    .testTarget(
      name: "BrokerCoreTests", dependencies: ["BrokerCore", "BrokerTestSupport"], swiftSettings: strict),
    .testTarget(name: "BrokerHTTPTests", dependencies: ["BrokerHTTP", "BrokerCore", "CBrokerShims"], swiftSettings: strict),
    .testTarget(
      name: "BrokerStoreTests", dependencies: ["BrokerStore", "BrokerCore", "BrokerTestSupport"], swiftSettings: strict),
    .testTarget(
      name: "BrokerProvidersTests", dependencies: ["BrokerProviders", "BrokerCore", "BrokerTestSupport"],
      swiftSettings: strict),
    .testTarget(name: "BrokerSystemTests", dependencies: ["BrokerSystem", "BrokerCore"], swiftSettings: strict),
    .testTarget(
      name: "BrokerAgentTests",
      // BrokerCLI: the request handler's tests run real commands through the CLI's one seam.
      dependencies: [
        "BrokerAgent", "BrokerCLI", "BrokerCore", "BrokerWire", "BrokerProviders", "BrokerStore", "BrokerSystem",
        "BrokerTestSupport",
      ], swiftSettings: strict),
    .testTarget(
      name: "BrokerCLITests",
      dependencies: [
        "BrokerCLI", "BrokerAgent", "BrokerCore", "BrokerProviders", "BrokerStore", "BrokerSystem", "BrokerWire",
        "BrokerTestSupport",
      ], swiftSettings: strict),
  ]
)

// The libFuzzer targets (README "Fuzzing"), only when scripts/fuzz builds them with
// `-sanitize=fuzzer` (libFuzzer supplies `main`, so a plain build could not link them).
if Context.environment["TOKENBROKER_FUZZ"] == "1" {
  package.targets += [
    .target(name: "CFuzzDriver", path: "Tests/Fuzz/Driver"),
    .executableTarget(
      name: "tokenbroker-fuzz",
      dependencies: ["CFuzzDriver", "BrokerCLI", "BrokerCore", "BrokerProviders", "BrokerStore", "BrokerSystem", "BrokerWire"],
      path: "Tests/Fuzz/Targets", swiftSettings: strict),
  ]
}
