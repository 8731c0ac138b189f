/// The shells `PROGRAM completions SHELL` writes a completion script for.
public enum CompletionShell: String, Sendable, CaseIterable {
    case bash, zsh, fish

    /// Where a Debian package installs the script (under the root of the installed files).
    public func installPath(program: String) -> String {
        switch self {
        case .bash: "usr/share/bash-completion/completions/" + program
        case .zsh: "usr/share/zsh/vendor-completions/_" + program
        case .fish: "usr/share/fish/vendor_completions.d/" + program + ".fish"
        }
    }
}

/// Completion scripts made from the same `CommandSpec` tree as `--help`.
///
/// All three scripts carry one table (per command path: its subcommands, its options, the
/// options that take a value) and walk the words typed so far as the parser does: words before
/// the first positional that name a subcommand descend, an option that takes a value swallows the
/// next word, and after the first positional no subcommand is offered. After an option that
/// takes a value, its words (`OptionSpec.completions`) or else files are offered; after a dash,
/// the command's options; else its subcommands, or its first positional's words.
extension CommandLineParser {
    /// The script for `shell`.
    public func completionScript(_ shell: CompletionShell) -> String {
        let table = completionTable()
        switch shell {
        case .bash: return bashScript(table)
        case .zsh: return zshScript(table)
        case .fish: return fishScript(table)
        }
    }

    /// One command of the table: its path words joined by spaces ("" for the root).
    struct CompletionEntry {
        var path: String
        var subcommands: [CommandSpec]
        var options: [OptionSpec]
        /// The words the command's first positional is completed with (empty: files).
        var positionalWords: [String]

        /// Each spelling of an option that has value words, with those words.
        var choices: [(spelling: String, words: [String])] {
            options.filter { !$0.completions.isEmpty }.flatMap { o in
                (["--" + o.long] + (o.short.map { ["-" + String($0)] } ?? [])).map { ($0, o.completions) }
            }
        }
    }

    func completionTable() -> [CompletionEntry] {
        var entries: [CompletionEntry] = []
        func walk(_ spec: CommandSpec, _ path: [String]) {
            let extra = path.isEmpty ? versionOption : []
            entries.append(CompletionEntry(path: path.joined(separator: " "), subcommands: spec.subcommands,
                                           options: spec.options + globalOptions + extra + [Self.helpOption],
                                           positionalWords: spec.positionals.first?.completions ?? []))
            for sub in spec.subcommands where sub.name != Self.helpWord { walk(sub, path + [sub.name]) }
        }
        walk(documentedRoot, [])
        return entries
    }

    private func header(_ shell: CompletionShell) -> String {
        "# \(shell.rawValue) completion for \(root.name); made by '\(root.name) completions \(shell.rawValue)' from the command specs its --help is made from; do not edit.\n"
    }

    /// `--long` and `-s` forms of options.
    private static func spellings(_ options: [OptionSpec]) -> [String] {
        options.flatMap { o in ["--" + o.long] + (o.short.map { ["-" + String($0)] } ?? []) }
    }

    private var function: String { "_" + root.name.map { $0.isLetter || $0.isNumber ? String($0) : "_" }.joined() }

    private func bashScript(_ table: [CompletionEntry]) -> String {
        let f = function
        var s = header(.bash)
        s += "\(f)_words() {\n    # $1: the command path, $2: subcommands, options or values; the words in REPLY.\n"
        s += "    case \"$2 $1\" in\n"
        for e in table {
            s += "        \(Self.posixQuote("subcommands " + e.path))) REPLY=\(Self.posixQuote(e.subcommands.map(\.name).joined(separator: " "))) ;;\n"
            s += "        \(Self.posixQuote("options " + e.path))) REPLY=\(Self.posixQuote(Self.spellings(e.options).joined(separator: " "))) ;;\n"
            s += "        \(Self.posixQuote("values " + e.path))) REPLY=\(Self.posixQuote(Self.spellings(e.options.filter(\.takesValue)).joined(separator: " "))) ;;\n"
            for (spelling, words) in e.choices {
                s += "        \(Self.posixQuote("choices \(spelling) " + e.path))) REPLY=\(Self.posixQuote(words.joined(separator: " "))) ;;\n"
            }
            if !e.positionalWords.isEmpty {
                s += "        \(Self.posixQuote("positionals " + e.path))) REPLY=\(Self.posixQuote(e.positionalWords.joined(separator: " "))) ;;\n"
            }
        }
        s += "        *) REPLY='' ;;\n    esac\n}\n\n"
        s += """
            \(f)_trim() {
                # bash replaces only what follows the last :, = or @ of the word (COMP_WORDBREAKS).
                if [[ "$cur" == *[:=@]* ]]; then
                    local p="${cur%"${cur##*[:=@]}"}"
                    COMPREPLY=("${COMPREPLY[@]#"$p"}")
                fi
            }

            \(f)() {
                # bash splits 127.0.0.1:8080, --opt=value and user@host at :, = and @
                # (COMP_WORDBREAKS): such a word is joined again with its neighbours, or a
                # --listen or --store value ends completion.
                local -a words=()
                local k join=0 word
                for ((k = 0; k < ${#COMP_WORDS[@]} && k <= COMP_CWORD; k++)); do
                    word="${COMP_WORDS[k]}"
                    if ((k > 1)) && { [[ "$word" == [:=@] ]] || ((join)); }; then
                        words[${#words[@]}-1]+="$word"
                        if [[ "$word" == [:=@] ]]; then join=1; else join=0; fi
                    else
                        words+=("$word")
                        join=0
                    fi
                done
                local cword=$((${#words[@]} - 1))
                local cur="${words[cword]}" prev="" cmdpath="" i positional=0 REPLY
                ((cword > 0)) && prev="${words[cword-1]}"
                for ((i = 1; i < cword; i++)); do
                    word="${words[i]}"
                    if [[ "$word" == "--" ]]; then positional=1; continue; fi
                    if ((positional == 0)) && [[ "$word" == -?* ]]; then
                        \(f)_words "$cmdpath" values
                        [[ "$word" != *=* && " $REPLY " == *" $word "* ]] && ((i++))
                        continue
                    fi
                    \(f)_words "$cmdpath" subcommands
                    if ((positional == 0)) && [[ " $REPLY " == *" $word "* ]]; then
                        cmdpath="${cmdpath:+$cmdpath }$word"
                    else
                        positional=1
                    fi
                done
                COMPREPLY=()
                \(f)_words "$cmdpath" values
                if [[ "$prev" == -?* && " $REPLY " == *" $prev "* ]]; then
                    \(f)_words "$cmdpath" "choices $prev"
                    if [[ -n "$REPLY" ]]; then COMPREPLY=($(compgen -W "$REPLY" -- "$cur")); else COMPREPLY=($(compgen -f -- "$cur")); fi
                    \(f)_trim
                    return 0
                fi
                if ((positional == 0)) && [[ "$cur" == -* ]]; then
                    \(f)_words "$cmdpath" options
                    COMPREPLY=($(compgen -W "$REPLY" -- "$cur"))
                    \(f)_trim
                    return 0
                fi
                if ((positional == 0)); then
                    \(f)_words "$cmdpath" subcommands
                    [[ -z "$REPLY" ]] && \(f)_words "$cmdpath" positionals
                    COMPREPLY=($(compgen -W "$REPLY" -- "$cur"))
                    \(f)_trim
                fi
                return 0
            }
            complete -o default -F \(f) \(root.name)

            """
        return s
    }

    private func zshScript(_ table: [CompletionEntry]) -> String {
        let f = function
        var s = "#compdef \(root.name)\n" + header(.zsh)
        s += "\(f)_words() {\n  # $1: the command path, $2: subcommands, options or values; the words (name:description) in reply.\n"
        s += "  reply=()\n  case \"$2 $1\" in\n"
        func described(_ pairs: [(String, String)]) -> String {
            pairs.map { Self.posixQuote($0.0.replacingOccurrences(of: ":", with: "\\:") + ":" + Self.oneLine($0.1)) }.joined(separator: " ")
        }
        for e in table {
            s += "    (\(Self.posixQuote("subcommands " + e.path))) reply=(\(described(e.subcommands.map { ($0.name, $0.summary) }))) ;;\n"
            s += "    (\(Self.posixQuote("options " + e.path))) reply=(\(described(e.options.flatMap { o in Self.spellings([o]).map { ($0, o.help) } }))) ;;\n"
            s += "    (\(Self.posixQuote("values " + e.path))) reply=(\(Self.spellings(e.options.filter(\.takesValue)).map(Self.posixQuote).joined(separator: " "))) ;;\n"
            for (spelling, words) in e.choices {
                s += "    (\(Self.posixQuote("choices \(spelling) " + e.path))) reply=(\(words.map(Self.posixQuote).joined(separator: " "))) ;;\n"
            }
            if !e.positionalWords.isEmpty {
                s += "    (\(Self.posixQuote("positionals " + e.path))) reply=(\(e.positionalWords.map(Self.posixQuote).joined(separator: " "))) ;;\n"
            }
        }
        s += "  esac\n}\n\n"
        s += """
            \(f)() {
              local cmdpath="" word prev cur
              local -i i positional=0
              local -a reply
              for ((i = 2; i < CURRENT; i++)); do
                word=${words[i]}
                if [[ $word == -- ]]; then positional=1; continue; fi
                if (( positional == 0 )) && [[ $word == -?* ]]; then
                  \(f)_words "$cmdpath" values
                  if [[ $word != *=* ]] && (( ${reply[(Ie)$word]} )); then (( i++ )); fi
                  continue
                fi
                \(f)_words "$cmdpath" subcommands
                if (( positional == 0 )) && (( ${reply[(I)${word}:*]} )); then
                  cmdpath=${cmdpath:+$cmdpath }$word
                else
                  positional=1
                fi
              done
              prev=${words[CURRENT-1]}
              cur=${words[CURRENT]}
              \(f)_words "$cmdpath" values
              if [[ $prev == -?* ]] && (( ${reply[(Ie)$prev]} )); then
                \(f)_words "$cmdpath" "choices $prev"
                if (( ${#reply} )); then compadd -a reply; else _files; fi
                return
              fi
              if (( positional == 0 )) && [[ $cur == -* ]]; then
                \(f)_words "$cmdpath" options
                _describe -t options option reply
                return
              fi
              if (( positional == 0 )); then
                \(f)_words "$cmdpath" subcommands
                if (( ${#reply} )); then
                  _describe -t commands command reply
                  return
                fi
                \(f)_words "$cmdpath" positionals
                if (( ${#reply} )); then
                  compadd -a reply
                  return
                fi
              fi
              _files
            }

            \(f) "$@"

            """
        return s
    }

    private func fishScript(_ table: [CompletionEntry]) -> String {
        let f = "_" + function
        let program = root.name
        var s = header(.fish)
        s += "function \(f)_words --description 'the subcommands, options or values ($argv[2]) of the command path $argv[1]'\n"
        s += "    switch \"$argv[2] $argv[1]\"\n"
        for e in table {
            s += "        case \(Self.fishQuote("subcommands " + e.path))\n            printf '%s\\n' \(e.subcommands.map { Self.fishQuote($0.name) }.joined(separator: " "))\n"
            s += "        case \(Self.fishQuote("options " + e.path))\n            printf '%s\\n' \(Self.spellings(e.options).map(Self.fishQuote).joined(separator: " "))\n"
            let values = Self.spellings(e.options.filter(\.takesValue))
            if !values.isEmpty {
                s += "        case \(Self.fishQuote("values " + e.path))\n            printf '%s\\n' \(values.map(Self.fishQuote).joined(separator: " "))\n"
            }
        }
        s += "    end\nend\n\n"
        s += """
            function \(f)_path --description 'the command path typed so far, then |0, or |1 after a positional'
                set -l typed (commandline -opc)
                set -e typed[1]
                set -l cmdpath ''
                set -l positional 0
                set -l skip 0
                for word in $typed
                    if test $skip = 1
                        set skip 0
                        continue
                    end
                    if test "$word" = '--'
                        set positional 1
                        continue
                    end
                    if test $positional = 0; and string match -q -- '-?*' $word
                        if not string match -q -- '*=*' $word; and contains -- $word (\(f)_words "$cmdpath" values)
                            set skip 1
                        end
                        continue
                    end
                    if test $positional = 0; and contains -- $word (\(f)_words "$cmdpath" subcommands)
                        set cmdpath (string trim -- "$cmdpath $word")
                    else
                        set positional 1
                    end
                end
                echo "$cmdpath|$positional"
            end

            function \(f)_at --description 'true when the command path typed so far is $argv[1] (and no positional yet with --subcommand)'
                set -l here (\(f)_path)
                if test "$argv[2]" = '--subcommand'
                    test "$here" = "$argv[1]|0"
                else
                    test "$here" = "$argv[1]|0"; or test "$here" = "$argv[1]|1"
                end
            end


            """
        for e in table {
            let at = Self.fishQuote(e.path)
            for sub in e.subcommands {
                s += "complete -c \(program) -f -n \(Self.fishQuote("\(f)_at \(at) --subcommand")) -a \(Self.fishQuote(sub.name)) -d \(Self.fishQuote(Self.oneLine(sub.summary)))\n"
            }
            if e.subcommands.isEmpty && !e.positionalWords.isEmpty {
                s += "complete -c \(program) -f -n \(Self.fishQuote("\(f)_at \(at) --subcommand")) -a \(Self.fishQuote(e.positionalWords.joined(separator: " ")))\n"
            }
            for o in e.options {
                var line = "complete -c \(program) -n \(Self.fishQuote("\(f)_at \(at)")) -l \(Self.fishQuote(o.long))"
                if let short = o.short { line += " -s \(Self.fishQuote(String(short)))" }
                if !o.completions.isEmpty {
                    line += " -x -a \(Self.fishQuote(o.completions.joined(separator: " ")))"
                } else if o.takesValue {
                    line += " -r -F"
                }
                s += line + " -d \(Self.fishQuote(Self.oneLine(o.help)))\n"
            }
        }
        return s
    }

    /// `text` in single quotes for bash and zsh (`'` as `'\''`).
    static func posixQuote(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    /// `text` in single quotes for fish (`\` and `'` escaped with a backslash).
    static func fishQuote(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'") + "'"
    }

    /// A description on one line (newlines and tabs as spaces).
    static func oneLine(_ text: String) -> String {
        String(text.map { $0 == "\n" || $0 == "\t" ? " " : $0 })
    }
}
