import BrokerCore
import Testing

/// The wall clock: whole Unix seconds, and rounded up for lifetimes told to a caller.
@Suite struct ClockTests {
  @Test func roundedUpIsNeverBeforeNowNorASecondPastIt() {
    let time = SystemTime()
    for _ in 0..<1000 {
      let before = time.now
      let up = time.nowRoundedUp
      let after = time.now
      #expect(up >= before && up <= after + 1)
    }
  }
}
