import Testing

@testable import BrokerProviders

/// The one reader of every JSON reply and document the providers read.
@Suite struct LenientJSONTests {
  func fields(_ json: String) -> JSONFields? { JSONFields.parse(Array(json.utf8)) }

  @Test func onlyAJSONObjectIsRead() {
    for text in ["", "not json", "[1,2]", #""text""#, "5", "null", "<html></html>", #"{"a":"#] {
      #expect(fields(text) == nil, "\(text)")
    }
    #expect(fields("{}") != nil)
  }

  @Test func aFieldOfAnotherTypeOrNullReadsAsAbsent() throws {
    let f = try #require(fields(#"{"s":"x","n":5,"b":true,"z":null,"o":{"k":"v"},"a":["p"]}"#))
    #expect(f.string("s") == "x")
    for name in ["n", "b", "z", "o", "a", "missing"] { #expect(f.string(name) == nil, "\(name)") }
    #expect(f.bool("b") == true)
    #expect(f.bool("s") == nil && f.bool("n") == nil)
    #expect(f.strings("a") == ["p"])
    #expect(f.strings("s") == nil)
  }

  @Test func integersComeAsNumbersOrNumericStrings() throws {
    let f = try #require(fields(#"{"i":7,"d":7.0,"s":" 7 ","f":7.9,"x":"seven","big":1e300,"neg":-3}"#))
    #expect(f.int("i") == 7 && f.int("d") == 7 && f.int("s") == 7)
    #expect(f.int("f") == 7)
    #expect(f.int("x") == nil && f.int("big") == nil && f.int("missing") == nil)
    #expect(f.int("neg") == -3)
  }

  @Test func arraysAreReadWholeOrElementByElement() throws {
    let f = try #require(fields(#"{"mixed":["a",1],"codes":[50076,"50079","x",null],"one":"a"}"#))
    #expect(f.strings("mixed") == nil)  // every element must be a string
    #expect(f.ints("codes") == [50076, 50079, nil, nil])
    #expect(f.ints("one") == nil)
  }

  @Test func presenceDigitsAndNonEmptyStrings() throws {
    let f = try #require(fields(#"{"c":{},"z":null,"e":"","p":123456789012,"q":"0042"}"#))
    #expect(f.has("c") && f.has("e"))
    #expect(!f.has("z") && !f.has("missing"))
    #expect(f.nonEmptyString("e") == nil)
    #expect(f.digits("p") == "123456789012" && f.digits("q") == "0042")
    #expect(f.digits("c") == nil)
  }
}
