# Prints, for every Unicode scalar value, the two character classes the
# renderers need, as they are in THIS Ruby (its Onigmo Unicode tables):
#   print: the characters String#inspect keeps as they are (rb_enc_isprint);
#          '"' and '\' count as printable (inspect escapes them for syntax).
#   word:  the characters matching /[[:word:]]/ (Psych's quoting regex).
# Output: JSON {"print": [[first, last], ...], "word": [...]}, or with
# --rust the same ranges as the Rust tables of src/hiera/render/unicode.rs.
require 'json'

def ranges
  out = []
  (0..0x10FFFF).each do |c|
    next if c >= 0xD800 && c <= 0xDFFF
    next unless yield(c.chr(Encoding::UTF_8))
    if out.last && out.last[1] == c - 1
      out.last[1] = c
    elsif out.last && out.last[1] == 0xD7FF && c == 0xE000
      out.last[1] = c
    else
      out << [c, c]
    end
  end
  out
end

Encoding.default_external = Encoding::UTF_8
print = ranges { |s| s == '"' || s == '\\' || s.inspect == "\"#{s}\"" }
word = ranges { |s| s.match?(/[[:word:]]/) }

if ARGV.include?('--rust')
  [['PRINT', print], ['WORD', word]].each do |name, rs|
    puts "pub(super) const #{name}: &[(u32, u32)] = &["
    rs.each_slice(4) { |sl| puts '    ' + sl.map { |a, b| format('(0x%04X, 0x%04X),', a, b) }.join(' ') }
    puts '];'
  end
else
  puts JSON.generate('print' => print, 'word' => word)
end
