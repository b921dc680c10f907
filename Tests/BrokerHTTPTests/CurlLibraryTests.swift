import BrokerCore
import Testing

@testable import BrokerHTTP

/// The loader of libcurl (CBrokerShims' curl_library.c), through its Swift face.
@Suite struct CurlLibraryTests {
  @Test func theSystemLibcurlResolvesAndStarts() throws {
    try CurlLibrary.resolve("libcurl.so.4")
    try CurlLibrary.start()
    try CurlLibrary.start()  // after the first success: returns at once
  }

  @Test func aMissingLibraryIsAnErrorThatNamesItAndWhatToInstall() {
    #expect {
      try CurlLibrary.resolve("libtokenbroker-no-such-curl.so.4")
    } throws: { error in
      guard case .libraryUnavailable(let detail) = error as? HTTPError else { return false }
      let message = (error as! HTTPError).description
      return detail.contains("libtokenbroker-no-such-curl.so.4") && detail.contains("cannot open shared object file")
        && message.hasPrefix("could not load libcurl (libtokenbroker-no-such-curl.so.4: ")
        && message.hasSuffix("; install libcurl4 (Debian: apt-get install libcurl4)")
    }
  }

  @Test func aLibraryWithoutTheCurlFunctionsNamesTheMissingSymbol() {
    // libc is loaded in every process and has none of them: the first one looked up is missing.
    #expect {
      try CurlLibrary.resolve("libc.so.6")
    } throws: { error in
      guard case .libraryUnavailable(let detail) = error as? HTTPError else { return false }
      return detail.hasPrefix("libc.so.6 at /") && detail.hasSuffix("libc.so.6 has no function curl_global_init")
    }
  }
}
