/// Bad input to the admin API: answered 400 with a JSON message naming the parameter.
package struct AdminInputError: Error, Equatable, CustomStringConvertible {
    package var parameter: String
    package var message: String

    package var description: String { "\(parameter): \(message)" }

    package init(parameter: String, message: String) {
        self.parameter = parameter
        self.message = message
    }
}
