import Testing
@Test func placeholder2() {}
