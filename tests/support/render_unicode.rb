# The two character classes the renderers need, as they are in THIS Ruby
# (its Onigmo Unicode tables), as lists of [first, last] code point ranges:
#   print: the characters String#inspect keeps as they are (rb_enc_isprint);
#          '"' and '\' count as printable (inspect escapes them for syntax).
#   word:  the characters matching /[[:word:]]/ (Psych's quoting regex).
# Required by render.rb; run directly it prints them as JSON, or with
# --rust as the tables of src/hiera/render/unicode.rs.
require 'json'

module RenderUnicode
  module_function

  def ranges
    out = []
    (0..0x10FFFF).each do |c|
      next if c >= 0xD800 && c <= 0xDFFF
      next unless yield(c.chr(Encoding::UTF_8))
      if out.last && (out.last[1] == c - 1 || (out.last[1] == 0xD7FF && c == 0xE000))
        out.last[1] = c
      else
        out << [c, c]
      end
    end
    out
  end

  def tables
    {
      'print' => ranges { |s| s == '"' || s == '\\' || s.inspect == "\"#{s}\"" },
      'word' => ranges { |s| s.match?(/[[:word:]]/) },
    }
  end
end

if $PROGRAM_NAME == __FILE__
  Encoding.default_external = Encoding::UTF_8
  tables = RenderUnicode.tables
  if ARGV.include?('--rust')
    [%w[PRINT print], %w[WORD word]].each do |name, key|
      puts "pub(super) const #{name}: &[(u32, u32)] = &["
      tables[key].each_slice(4) do |sl|
        puts '    ' + sl.map { |a, b| format('(0x%04X, 0x%04X),', a, b) }.join(' ')
      end
      puts '];'
    end
  else
    puts JSON.generate(tables)
  end
end
