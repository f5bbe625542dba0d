// Opens a support interaction as the user whose session token is in SWITCHBOARD_TOKEN, and sends one message:
//
//     SWITCHBOARD=http://localhost:8080 SWITCHBOARD_TOKEN=sbs_… \
//         swift run --package-path examples/client-cli client-cli "Card blocked" "My card was blocked abroad."
//
// The token is a customer's session token, which the tenant's backend gets from POST /v1/sessions.
import Foundation
import SwitchboardClient

let environment = ProcessInfo.processInfo.environment
guard let address = environment["SWITCHBOARD"], let baseURL = URL(string: address),
      let token = environment["SWITCHBOARD_TOKEN"], !token.isEmpty else {
    FileHandle.standardError.write(Data("""
        usage: SWITCHBOARD=http://localhost:8080 SWITCHBOARD_TOKEN=sbs_… client-cli [SUBJECT] [MESSAGE]
        (SWITCHBOARD_TOKEN is a customer's session token, from POST /v1/sessions)

        """.utf8))
    exit(2)
}
let arguments = Array(CommandLine.arguments.dropFirst())
let subject = arguments.count > 0 ? arguments[0] : "Card blocked"
let text = arguments.count > 1 ? arguments[1] : "My card was blocked abroad."

// An app's token provider asks its backend (and may refresh); this one returns the token it was given.
let client = SwitchboardClient(baseURL: baseURL, tokenProvider: { token })
do {
    let interaction = try await client.startInteraction(subject: subject)
    print("interaction \(interaction.id): \(interaction.state.rawValue), subject \"\(interaction.subject ?? "")\"")
    let message = try await client.sendMessage(text, to: interaction.id)
    print("message \(message.seq) sent by \(message.senderRole) \(message.senderID): \(message.text)")
} catch SwitchboardError.problem(let problem) {
    FileHandle.standardError.write(Data("error: \(problem.status) \(problem.title): \(problem.detail ?? problem.type)\n".utf8))
    exit(1)
} catch {
    FileHandle.standardError.write(Data("error: \(error)\n".utf8))
    exit(1)
}
