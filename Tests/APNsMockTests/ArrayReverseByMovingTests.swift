import Testing

@testable import APNsMock

@Suite("Array.reverseByMoving")
struct ArrayReverseByMovingTests {
    final class Box: Equatable {
        let value: Int
        init(_ value: Int) { self.value = value }
        static func == (lhs: Box, rhs: Box) -> Bool { lhs.value == rhs.value }
    }

    @Test(arguments: [0, 1, 2, 3, 8, 9])
    func reversesAsReverseDoesAndKeepsEachElementOnce(count: Int) {
        var boxes = (0..<count).map(Box.init)
        let originals = boxes
        boxes.reverseByMoving()
        #expect(boxes.map(\.value) == Array((0..<count).reversed()))
        // The same objects, moved, not remade.
        for (box, original) in zip(boxes, originals.reversed()) {
            #expect(box === original)
        }
        var values = Array(0..<count)
        values.reverseByMoving()
        #expect(values == Array((0..<count).reversed()))
    }
}
